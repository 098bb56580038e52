package modelfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/internal/onnx"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
)

// ExportResult describes an ONNX file written by Export.
type ExportResult struct {
	Model  string // e.g. "mnist-cnn"
	Params int
	Path   string // the ONNX file
	Bytes  int    // its size
	Input  []int  // input shape [N, C, H, W]; N (-1) is dynamic
	Output []int  // output shape [N, classes]
	Opset  int
	Doc    string // the model's doc string: input scaling and layers
}

// exportMeta is what the export reads of a checkpoint's run metadata: the
// run's configuration and, where the file records it, the input
// description of image models (the "input" entry of model.gtck).
type exportMeta struct {
	Config *train.Config    `json:"config"`
	Input  *train.InputSpec `json:"input"`
}

// Export reads the averaged image model of the checkpoint at path
// (model.gtck, or checkpoint.gtck, of a run) and atomically writes it
// to out as an ONNX model (opset models.ONNXOpset): input float32 NCHW
// [N,C,H,W] with a dynamic batch size N, scaled as gtstorm feeds the
// network, output the logits [N,classes]. The model's doc string says how
// the run scaled its inputs; its metadata_props record the run's dataset,
// the input's scaling ("gtstorm.input.scale" 1/255) and transform from pixel
// bytes ("gtstorm.input.transform"), for light-on-dark data (MNIST,
// Fashion-MNIST, FEMNIST) the background it expects
// ("gtstorm.input.background"), normalisation and, when the checkpoint
// holds them, the per-channel mean and standard deviation and
// the class names. Its producer_version is gtstorm's (see
// producerVersion). The checkpoint must pass train.CheckModelFile, the
// validation eval and predict apply too.
func Export(path, out string) (*ExportResult, error) {
	if out == "" {
		return nil, fmt.Errorf("no ONNX output file given")
	}
	if same(path, out) {
		return nil, fmt.Errorf("%s: the ONNX output would overwrite the checkpoint it reads", out)
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("write %s: is a directory, want a file name", out)
	}
	// The validation predict and eval use: metadata, layout, finite
	// parameters and outputs.
	ck, meta, err := train.ReadModelFile(path)
	if err != nil {
		return nil, err
	}
	if _, _, ok := models.Classifier(meta.Model); !ok {
		return nil, fmt.Errorf("%s holds %s; only the image models (such as %s, %s, %sH1,H2,…) export to ONNX",
			path, describeModel(ck.Model), models.MNISTCNNName, models.CIFARCNNName, models.MLPPrefix)
	}
	om, err := models.ONNX(meta.Model, ck.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	em := exportMeta{Config: &meta.Config, Input: meta.Input}
	doc, md := exportDoc(ck.Model, path, &em)
	om.DocString, om.Metadata = doc, append(om.Metadata, md...)
	om.ProducerVersion = producerVersion()
	b, err := om.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := atomicfile.WriteBytes(out, b); err != nil {
		return nil, err
	}
	in := om.Graph.Inputs[0].Shape
	res := &ExportResult{Model: ck.Model, Params: len(ck.Params), Path: out, Bytes: len(b),
		Opset: models.ONNXOpset, Doc: om.DocString + "\n" + om.Graph.DocString, Output: []int{-1, int(om.Graph.Outputs[0].Shape[1].Value)}}
	for _, d := range in {
		if d.Param != "" {
			res.Input = append(res.Input, -1)
		} else {
			res.Input = append(res.Input, int(d.Value))
		}
	}
	return res, nil
}

// describeModel names a checkpoint's model for an error message.
func describeModel(name string) string {
	if name == models.NewLogReg(1, models.DefaultAlpha).Name() {
		return "a logistic regression (" + name + ")"
	}
	return "model " + name
}

// exportDoc returns the model doc string and metadata of an export: where
// it comes from and how its input is scaled.
func exportDoc(model, path string, em *exportMeta) (string, []onnx.Property) {
	props := []onnx.Property{{Key: "gtstorm.model", Value: model}, {Key: "gtstorm.source", Value: filepath.Base(path)}}
	var doc strings.Builder
	fmt.Fprintf(&doc, "gtstorm %s exported from %s. ", model, filepath.Base(path))
	dataset := map[string]string{"mnist-cnn": "mnist", "cifar-cnn": "cifar10"}[model]
	normalize := false
	if cfg := em.Config; cfg != nil {
		dataset, normalize = cfg.Dataset, cfg.Normalize && cfg.Dataset == "cifar10"
		props = append(props,
			onnx.Property{Key: "gtstorm.dataset", Value: cfg.Dataset},
			onnx.Property{Key: "gtstorm.algo", Value: cfg.Algo})
		if cfg.Dataset == "cifar10" {
			props = append(props, onnx.Property{Key: "gtstorm.normalize", Value: fmt.Sprint(cfg.Normalize)})
		}
	}
	scaling, transform := inputScaling(dataset, normalize, em)
	fmt.Fprintf(&doc, "Input: float32 NCHW [N,C,H,W], N the batch size (dynamic); %s ", scaling)
	props = append(props,
		onnx.Property{Key: "gtstorm.input.scale", Value: "1/255"},
		onnx.Property{Key: "gtstorm.input.transform", Value: transform})
	if lightOnDark(dataset) {
		props = append(props, onnx.Property{Key: "gtstorm.input.background", Value: "dark: light ink on a dark background, as " + dataset + "'s"})
	}
	if in := em.Input; in != nil {
		if len(in.Mean) > 0 {
			props = append(props,
				onnx.Property{Key: "gtstorm.input.mean", Value: floats(in.Mean)},
				onnx.Property{Key: "gtstorm.input.std", Value: floats(in.Std)})
		}
		if len(in.Classes) > 0 {
			props = append(props, onnx.Property{Key: "gtstorm.classes", Value: strings.Join(in.Classes, ",")})
		}
	}
	classes := 10
	if em.Input != nil && len(em.Input.Classes) > 0 {
		classes = len(em.Input.Classes)
	}
	fmt.Fprintf(&doc, "Output: float32 [N,%d] class logits (softmax gives the probabilities).", classes)
	return doc.String(), props
}

// lightOnDark reports whether the images of dataset are light ink on a
// dark background, which predict restores by inverting a light-backed
// image (see imageSample).
func lightOnDark(dataset string) bool {
	return dataset == "mnist" || dataset == "fashion-mnist" || dataset == "femnist"
}

// modulePath is the path of gtstorm's module.
const modulePath = "github.com/gtstorm/gtstorm"

// producerVersion returns the version of gtstorm that the running binary
// was built from, as its build information records it (see moduleVersion).
func producerVersion() string {
	return moduleVersion(debug.ReadBuildInfo())
}

// moduleVersion returns the version of gtstorm's module in a binary's
// build information: the main module's, or the dependency's (or its
// replacement's) when gtstorm is a library of another; "devel" when
// there is none, or the build records none ("" or "(devel)").
func moduleVersion(bi *debug.BuildInfo, ok bool) string {
	v := ""
	switch {
	case !ok || bi == nil:
	case bi.Main.Path == modulePath:
		v = bi.Main.Version
	default:
		for _, dep := range bi.Deps {
			if dep.Path != modulePath {
				continue
			}
			v = dep.Version
			if dep.Replace != nil {
				v = dep.Replace.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}

// inputScaling says how an export's input is made from pixel bytes: in
// words for the doc string, and as the formula of the metadata's
// gtstorm.input.transform.
func inputScaling(dataset string, normalize bool, em *exportMeta) (words, transform string) {
	const scaled, standardised = "x = byte/255", "x = (byte/255 - mean[c]) / std[c]"
	switch {
	case dataset == "mnist":
		return "MNIST pixels as bytes divided by 255, in [0,1].", scaled
	case em.Input != nil && len(em.Input.Mean) > 0:
		return fmt.Sprintf("pixels as bytes divided by 255, then standardised per channel c as (x - mean[c]) / std[c] with the training set's mean %v and std %v.", em.Input.Mean, em.Input.Std),
			standardised + ", mean and std in gtstorm.input.mean and gtstorm.input.std"
	case normalize:
		return "pixels as bytes divided by 255, then standardised per channel with the mean and standard deviation of the CIFAR-10 training set (data.NormalizeChannels).",
			standardised + ", mean and std of the CIFAR-10 training set (not recorded)"
	case em.Config != nil:
		return "pixels as bytes divided by 255, in [0,1] (the run did not normalise).", scaled
	}
	return "scaled as the run fed the network (pixels divided by 255, standardised per channel when the run normalised).",
		scaled + ", then standardised per channel if the run normalised (not recorded)"
}

func floats(v []float32) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// same reports whether a and b name the same file (or the same path, when
// neither exists).
func same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}
