#!/usr/bin/python3
"""PyTorch gradient fixtures for models/torch_test.go (issue 31, "Same gradients as PyTorch").

Run from the repository root, with Debian's torch (apt-get install python3-torch libopenblas0-pthread):

    /usr/bin/python3 models/testdata/torch/make_fixtures.py

It rewrites models/testdata/torch/resnet20-gn.bin and fedavg-cnn.bin. The committed files were made with
Debian 12's python3-torch 1.13.1+dfsg-4 (torch.__version__ "1.13.0a0") and python3-numpy 1:1.24.2-1, one
thread; every file records the versions that made it in its header.

For each network the script defines the network as SPEC §12 does, with torch.nn modules,

  resnet20-gn  conv3x3 (no bias) → GroupNorm(2, C, eps=1e-5) → ReLU; three stages of three basic blocks
               of 16, 32, 64 channels, the first block of stages 2 and 3 of stride 2, a projection
               shortcut conv1x1 (stride s, no bias) → GroupNorm where the shape changes; the mean over
               the maps; Linear 64 → classes. On CIFAR-10's 3×32×32 with 10 classes.
  fedavg-cnn   conv5x5 C→32 (padding 2, bias) → ReLU → max-pool 2; conv5x5 32→64 (padding 2) → ReLU →
               max-pool 2; Linear → 512 → ReLU → Linear → classes. On FEMNIST's 1×28×28 with 62 classes.

sets its weights, draws a batch of byte images and labels with torch's generator (torch.manual_seed), computes
the batch-mean cross-entropy and its gradient in float32 (the fixture) and, as a reference for the size of
float32's rounding, again in float64 from the same float32 weights and inputs. Batches: 4 for resnet20-gn,
8 for fedavg-cnn.

The seed. A ReLU whose input lies within float32's rounding of 0 (a few 1e-6 deep in ResNet-20), or a
max-pool window whose two largest values do, may route the gradient one way in torch and the other in
gtstorm; one such unit moves whole tensors of the gradient by ~1e-3. The script therefore takes, of a fixed
range of seeds, the one whose float64 forward pass keeps every ReLU input and every live max-pool window's
gap widest from 0 (choose_seed), and records both margins in the header.

The weights. The fixture does not store them: fedavg-cnn on 1×28×28 has 1.7 million parameters, 6.8 MB in
float32, and quantising them to a byte each would make ties in the max-pools likely. They are drawn
instead from a counter-based generator that the Go test repeats bit for bit: parameter k of the flat
vector (gtstorm's layout, counted from 0 over all tensors) is

    r = splitmix64(seed + (k + 1)·0x9E3779B97F4A7C15)          (64-bit wrap-around arithmetic)
    v = (2·(r >> 40) − (2²⁴ − 1)) / 2²⁴                        (float64, exact; in (−1, 1))
    w = float32(center + bound·v)                              (float64 product, then sum, then rounded)

with splitmix64(z) = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
z ^ (z >> 31). center and bound are each tensor's, recorded in the header: convolution weights have
Kaiming's variance 2/fan_in (bound √(6/fan_in)), biases and dense weights PyTorch's ±1/√fan_in,
GroupNorm's γ = 1 ± 0.1·√3·v and β = ±0.1·√3·v (mean 1 and 0, standard deviation 0.1), so that the
scale and shift and their gradients are not trivial. The header holds the SHA-256 of the float32 vector.

The input. gtstorm's data.Dataset with Bytes (and no Mean/Std) feeds the network float32(byte)·float32(1/255);
the script computes the same product in float32 and records the SHA-256 of the input tensor, which the Go
test checks against data.Dataset.Dense.

The file: the 8 bytes "GTSTORCH", a uint32 (little-endian) header length, the JSON header, then the
payload: the batch's images (uint8, NCHW, one after another) at images.offset, and each tensor's float32
(little-endian) gradient at its grad_offset, in gtstorm's layout and shapes: convolution weights
[OC,C,KH,KW] as torch's, dense weights [in,out] (torch's Linear weight transposed), GroupNorm's scale .g
and shift .b [C]. A tensor of more than MAX_FULL values (fedavg-cnn's fc1.w) keeps the rows (first
index) 0, s, 2s, … of its gradient, s its grad_row_stride, to keep the file small; its header entry also
holds the sum of squares of its whole gradient, so that the gradient's norm is still checked in full.
"""

import hashlib
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"GTSTORCH"
MAX_FULL = 300_000  # tensors larger than this keep a subset of their gradient's rows
ROW_STRIDE = 4
GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


# ---------------------------------------------------------------- the networks, as SPEC §12 defines them


class BasicBlockGN(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.gn1 = nn.GroupNorm(2, cout, eps=1e-5)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.gn2 = nn.GroupNorm(2, cout, eps=1e-5)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.GroupNorm(2, cout, eps=1e-5))

    def forward(self, x):
        h = F.relu(self.gn1(self.conv1(x)))
        h = self.gn2(self.conv2(h))
        return F.relu(h + (x if self.shortcut is None else self.shortcut(x)))

    def gtstorm_params(self, prefix):
        """(gtstorm name, torch parameter, transposed) in gtstorm's layout order."""
        out = [(prefix + ".conv1.w", self.conv1.weight, False),
               (prefix + ".gn1.g", self.gn1.weight, False), (prefix + ".gn1.b", self.gn1.bias, False),
               (prefix + ".conv2.w", self.conv2.weight, False),
               (prefix + ".gn2.g", self.gn2.weight, False), (prefix + ".gn2.b", self.gn2.bias, False)]
        if self.shortcut is not None:
            out += [(prefix + ".shortcut.conv.w", self.shortcut[0].weight, False),
                    (prefix + ".shortcut.gn.g", self.shortcut[1].weight, False),
                    (prefix + ".shortcut.gn.b", self.shortcut[1].bias, False)]
        return out


class ResNetGN(nn.Module):
    def __init__(self, depth, channels, classes):
        super().__init__()
        n = (depth - 2) // 6
        self.conv1 = nn.Conv2d(channels, 16, 3, 1, 1, bias=False)
        self.gn1 = nn.GroupNorm(2, 16, eps=1e-5)
        self.stages = nn.ModuleList()
        cin = 16
        for cout, stride in ((16, 1), (32, 2), (64, 2)):
            blocks = nn.ModuleList()
            for b in range(n):
                blocks.append(BasicBlockGN(cin, cout, stride if b == 0 else 1))
                cin = cout
            self.stages.append(blocks)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        h = F.relu(self.gn1(self.conv1(x)))
        for blocks in self.stages:
            for block in blocks:
                h = block(h)
        return self.fc(h.mean((2, 3)))

    def gtstorm_params(self):
        out = [("conv1.w", self.conv1.weight, False), ("gn1.g", self.gn1.weight, False), ("gn1.b", self.gn1.bias, False)]
        for s, blocks in enumerate(self.stages):
            for b, block in enumerate(blocks):
                out += block.gtstorm_params("layer%d.%d" % (s + 1, b))
        return out + [("fc.w", self.fc.weight, True), ("fc.b", self.fc.bias, False)]


class FedAvgCNN(nn.Module):
    def __init__(self, shape, classes):
        super().__init__()
        c, h, w = shape
        self.conv1 = nn.Conv2d(c, 32, 5, 1, 2)
        self.conv2 = nn.Conv2d(32, 64, 5, 1, 2)
        self.fc1 = nn.Linear(64 * (h // 2 // 2) * (w // 2 // 2), 512)
        self.fc2 = nn.Linear(512, classes)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
        h = F.max_pool2d(F.relu(self.conv2(h)), 2, 2)
        h = F.relu(self.fc1(torch.flatten(h, 1)))
        return self.fc2(h)

    def gtstorm_params(self):
        return [("conv1.w", self.conv1.weight, False), ("conv1.b", self.conv1.bias, False),
                ("conv2.w", self.conv2.weight, False), ("conv2.b", self.conv2.bias, False),
                ("fc1.w", self.fc1.weight, True), ("fc1.b", self.fc1.bias, False),
                ("fc2.w", self.fc2.weight, True), ("fc2.b", self.fc2.bias, False)]


# ---------------------------------------------------------------- the weights


def splitmix64(z):
    """SplitMix64's finaliser of uint64 array z (numpy wraps modulo 2⁶⁴)."""
    z = z.copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


def draw(seed, first, count, center, bound):
    """Parameters first … first+count−1 of the flat vector: float32(center + bound·v)."""
    k = np.arange(first + 1, first + count + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + k * np.uint64(GAMMA)
    r = splitmix64(z)
    a = (r >> np.uint64(40)).astype(np.float64)
    v = (2.0 * a - float((1 << 24) - 1)) / float(1 << 24)
    return (center + bound * v).astype(np.float32)


def init_rule(name, shape):
    """(center, bound) of tensor name of gtstorm shape shape."""
    kind = name.rsplit(".", 1)[1]
    is_gn = ".gn" in name or name.startswith("gn") or ".shortcut.gn." in name
    if is_gn:
        return (1.0 if kind == "g" else 0.0), 0.1 * np.sqrt(3.0)
    if len(shape) == 4:  # convolution weights [OC,C,K,K]: Kaiming, variance 2/fan_in
        return 0.0, float(np.sqrt(6.0 / (shape[1] * shape[2] * shape[3])))
    if len(shape) == 2:  # dense weights [in,out]: PyTorch's ±1/√fan_in
        return 0.0, float(1.0 / np.sqrt(shape[0]))
    return None  # a bias: its layer's fan-in, set by the caller


def set_weights(model, seed):
    """Draws the weights into model; returns the header's tensor entries and the flat float32 vector."""
    entries, flat, k = [], [], 0
    fan_in = None
    for name, p, transposed in model.gtstorm_params():
        shape = list(p.shape[::-1]) if transposed else list(p.shape)
        rule = init_rule(name, shape)
        if rule is None:  # the bias of the layer just seen
            rule = (0.0, float(1.0 / np.sqrt(fan_in)))
        elif len(shape) > 1:
            fan_in = shape[0] if len(shape) == 2 else shape[1] * shape[2] * shape[3]
        center, bound = rule
        w = draw(seed, k, int(np.prod(shape)), center, bound).reshape(shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(w.T.copy() if transposed else w))
        entries.append({"name": name, "shape": shape, "center": center, "bound": bound, "offset": k})
        flat.append(w.reshape(-1))
        k += w.size
    return entries, np.concatenate(flat)


# ---------------------------------------------------------------- checks of the batch's margins


def margins(model, x):
    """The smallest |input| of a ReLU and the smallest gap between the largest and the second largest
    value of a max-pool window, over the float32 forward pass: values closer than float32's rounding
    could go either way in another implementation."""
    relu_min, pool_min = [float("inf")], [float("inf")]
    orig_relu, orig_pool = F.relu, F.max_pool2d

    def relu(t, *a, **kw):
        relu_min[0] = min(relu_min[0], t.detach().abs().min().item())
        return orig_relu(t, *a, **kw)

    def max_pool2d(t, k, s, *a, **kw):
        u = F.unfold(t.detach().flatten(0, 1).unsqueeze(1), k, stride=s)  # [N·C, k·k, windows]
        top = u.topk(2, dim=1).values
        live = top[:, 0] > 0  # after a ReLU, windows of zeros pass no gradient: their ties do not matter
        if live.any():
            pool_min[0] = min(pool_min[0], (top[:, 0] - top[:, 1])[live].min().item())
        return orig_pool(t, k, s, *a, **kw)

    F.relu, F.max_pool2d = relu, max_pool2d
    try:
        with torch.no_grad():
            model(x)
    finally:
        F.relu, F.max_pool2d = orig_relu, orig_pool
    return relu_min[0], (pool_min[0] if pool_min[0] != float("inf") else None)


# ---------------------------------------------------------------- one fixture


def draw_batch(model, shape, classes, batch, seed):
    """The batch and the weights of seed: byte images, labels, the float32 input, and set_weights's
    entries and vector."""
    torch.manual_seed(seed)
    images = torch.randint(0, 256, (batch, *shape), dtype=torch.uint8)
    labels = torch.randint(0, classes, (batch,), dtype=torch.int64)
    x = images.to(torch.float32) * torch.tensor(1.0 / 255, dtype=torch.float32)  # gtstorm's Dataset.Dense
    entries, flat = set_weights(model, seed)
    return images, labels, x, entries, flat


def choose_seed(model, shape, classes, batch, seeds):
    """The seed of seeds whose batch and weights keep every ReLU input and every max-pool window's
    runner-up farthest from a tie (in float64): float32's rounding, a few 1e-6 deep in the network, then
    cannot send the gradient another way in gtstorm than in torch."""
    best = None
    for seed in seeds:
        _, _, x, _, _ = draw_batch(model, shape, classes, batch, seed)
        relu, pool = margins(model.double(), x.double())
        model.float()
        m = min(relu, pool if pool is not None else relu)
        if best is None or m > best[0]:
            best = (m, seed)
    return best[1]


def make(name, model, shape, classes, batch, seeds):
    seed = choose_seed(model, shape, classes, batch, seeds)
    images, labels, x, entries, flat = draw_batch(model, shape, classes, batch, seed)

    model.zero_grad()
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    grads32 = [(p.grad.T if tr else p.grad).contiguous().numpy().astype(np.float32) for _, p, tr in model.gtstorm_params()]

    m64 = model.double()
    m64.zero_grad()
    loss64 = F.cross_entropy(m64(x.double()), labels)
    loss64.backward()
    grads64 = [(p.grad.T if tr else p.grad).contiguous().numpy() for _, p, tr in m64.gtstorm_params()]
    relu_min, pool_min = margins(m64, x.double())
    model.float()

    payload = bytearray(images.numpy().tobytes())
    header = {
        "format": 1,
        "made_by": "models/testdata/torch/make_fixtures.py",
        "torch": torch.__version__, "debian_python3_torch": debian_version("python3-torch"),
        "numpy": np.__version__, "python": sys.version.split()[0], "threads": torch.get_num_threads(),
        "model": name, "shape": list(shape), "classes": classes, "batch": batch, "seed": seed,
        "seed_search": "the seed of %d to %d with the widest margins (choose_seed)" % (seeds[0], seeds[-1]),
        "labels": labels.tolist(),
        "images": {"offset": 0, "bytes": images.numel()},
        "input_sha256": hashlib.sha256(x.numpy().astype("<f4").tobytes()).hexdigest(),
        "params": {"count": int(flat.size), "generator": "splitmix64", "seed": seed,
                   "sha256": hashlib.sha256(flat.astype("<f4").tobytes()).hexdigest()},
        "loss": float(loss.item()), "loss_float64": float(loss64.item()),
        "grad_norm": float(np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in grads32))),
        "grad_norm_float64": float(np.sqrt(sum(float(np.sum(g ** 2)) for g in grads64))),
        "min_relu_input_float64": relu_min, "min_maxpool_gap_float64": pool_min,
        "tensors": entries,
    }
    worst = 0.0
    for e, g, g64 in zip(entries, grads32, grads64):
        kept = g
        if g.size > MAX_FULL:
            kept = g[::ROW_STRIDE]
            e["grad_row_stride"] = ROW_STRIDE
        e["grad_offset"] = len(payload)
        e["grad_count"] = int(kept.size)
        e["grad_sumsq"] = float(np.sum(g.astype(np.float64) ** 2))
        e["grad_sumsq_float64"] = float(np.sum(g64 ** 2))
        e["grad_max_abs"] = float(np.max(np.abs(g)))
        payload += kept.astype("<f4").tobytes()
        big = np.abs(g64) > 1e-3 * np.max(np.abs(g64))
        if big.any():
            worst = max(worst, float(np.max(np.abs(g[big] - g64[big]) / np.abs(g64[big]))))
    head = json.dumps(header, indent=1).encode()
    path = os.path.join(HERE, name + ".bin")
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<I", len(head)) + head + bytes(payload))
    print("%s: %s, %d parameters, batch %d; loss %.9g (float64 %.12g); |grad| %.9g (float64 %.12g);"
          " float32 vs float64 gradient: max relative error %.3g where |g| > 1e-3·max; smallest |ReLU input| %.3g,"
          " smallest max-pool gap %s; %d bytes" %
          (path, shape, flat.size, batch, header["loss"], header["loss_float64"], header["grad_norm"],
           header["grad_norm_float64"], worst, relu_min, pool_min, os.path.getsize(path)))


def debian_version(pkg):
    try:
        with open("/var/lib/dpkg/status", encoding="utf-8") as f:
            block = None
            for line in f:
                if line.startswith("Package: "):
                    block = line.split()[1]
                elif block == pkg and line.startswith("Version: "):
                    return line.split()[1]
    except OSError:
        pass
    return None


def main():
    torch.set_num_threads(1)
    make("resnet20-gn", ResNetGN(20, 3, 10), (3, 32, 32), 10, batch=4, seeds=range(1, 151))
    make("fedavg-cnn", FedAvgCNN((1, 28, 28), 62), (1, 28, 28), 62, batch=8, seeds=range(1, 101))


if __name__ == "__main__":
    main()
