// Runs an ONNX model with onnxruntime-node (CPU), for models/onnxrt_test.go.
//
//   node run.js MODEL.onnx INPUT.bin N,C,H,W OUTPUT.bin
//
// INPUT.bin holds the float32 input tensor (little-endian, row-major, of the
// shape given); the model's first output is written to OUTPUT.bin the same
// way, and its shape and onnxruntime's version are printed as one line of
// JSON. onnxruntime-node is the version package.json pins; install it once
// with
//
//   ONNXRUNTIME_NODE_INSTALL=skip npm ci --prefix DIR   (DIR holding a copy of package.json and package-lock.json)
//
// and run this script with NODE_PATH=DIR/node_modules (.ci/run does this in
// ~/.cache/gtstorm/onnxrt). ONNXRUNTIME_NODE_INSTALL=skip keeps the install
// script from fetching the CUDA provider, which the CPU run does not need.
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [modelPath, inputPath, dims, outputPath] = process.argv.slice(2);
  if (!outputPath) {
    throw new Error('usage: node run.js MODEL.onnx INPUT.bin N,C,H,W OUTPUT.bin');
  }
  const shape = dims.split(',').map(Number);
  const raw = fs.readFileSync(inputPath);
  const count = shape.reduce((a, b) => a * b, 1);
  if (raw.length !== 4 * count) {
    throw new Error(`${inputPath}: ${raw.length} bytes, want ${4 * count} for float32 [${shape}]`);
  }
  const x = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    x[i] = raw.readFloatLE(4 * i);
  }
  // One thread and no graph rewriting beyond the basic (constant folding,
  // redundant nodes): the run checks the graph as written.
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'basic',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const feeds = {};
  feeds[session.inputNames[0]] = new ort.Tensor('float32', x, shape);
  const results = await session.run(feeds);
  const y = results[session.outputNames[0]];
  const out = Buffer.alloc(4 * y.data.length);
  for (let i = 0; i < y.data.length; i++) {
    out.writeFloatLE(y.data[i], 4 * i);
  }
  fs.writeFileSync(outputPath, out);
  console.log(JSON.stringify({
    onnxruntime: ort.env.versions,
    input: session.inputNames[0],
    output: session.outputNames[0],
    dims: y.dims,
    type: y.type,
  }));
}

main().catch((err) => {
  console.error(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
