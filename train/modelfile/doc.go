// Package modelfile uses the model a run leaves behind (model.gtck, or a
// resume checkpoint): [Predict] classifies image files with an MNIST or
// CIFAR-10 model, reading PNG and JPEG files into the samples the model
// was trained on; [Eval] measures a model on a dataset's test set; and
// [Export] writes a CNN as an ONNX model.
//
// The file's format and its run metadata are [train]'s: train writes the
// model file at the end of a run and reads it back with
// [train.ReadModelFile]; this package only reads it.
//
// [train]: https://pkg.go.dev/github.com/gtstorm/gtstorm/train
package modelfile
