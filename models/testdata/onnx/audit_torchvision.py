#!/usr/bin/python3
"""Audit of the ONNX import on torchvision 0.14's classification networks (Debian's python3-torchvision).

    /usr/bin/python3 models/testdata/onnx/audit_torchvision.py OUTDIR [NAME ...]

exports each network (BatchNorm swapped for GroupNorm, 10 classes, input 3x32x32, opset 13, eval mode) to
OUTDIR/NAME.onnx and runs `go run ./cmd/gtstorm summary --model OUTDIR/NAME.onnx --dataset cifar10` on it from
the repository root, printing one line a network: its layers and parameters, or the import's refusal. The
tests do not run it (they need no torchvision); it is how the import's coverage of common networks is checked.
"""
import math, os, subprocess, sys
import torch, torch.nn as nn
import torchvision.models as tvm


def gn(c, *args, **kwargs):
    """Wu and He's 32 groups where they divide the channels, else as many as do (gcd(32, C)): a layer of 32
    channels or fewer has one channel a group, whose Reshape [N,C,-1] torch writes as for flatten(2)."""
    return nn.GroupNorm(math.gcd(32, c), c)


def swap_bn(m):
    """Replaces every BatchNorm2d of m by a GroupNorm, for the networks whose norm layer is not a parameter."""
    for name, child in m.named_children():
        if isinstance(child, nn.BatchNorm2d):
            setattr(m, name, gn(child.num_features))
        else:
            swap_bn(child)
    return m


NETS = {
    "tv_resnet18": lambda: tvm.resnet18(num_classes=10, norm_layer=gn),
    "tv_resnet50": lambda: tvm.resnet50(num_classes=10, norm_layer=gn),
    "tv_resnext50": lambda: tvm.resnext50_32x4d(num_classes=10, norm_layer=gn),
    "tv_mobilenet_v2": lambda: tvm.mobilenet_v2(num_classes=10, norm_layer=gn, width_mult=0.5),
    "tv_mobilenet_v3_small": lambda: tvm.mobilenet_v3_small(num_classes=10, norm_layer=gn),
    "tv_efficientnet_b0": lambda: tvm.efficientnet_b0(num_classes=10, norm_layer=gn),
    "tv_shufflenet_v2": lambda: swap_bn(tvm.shufflenet_v2_x0_5(num_classes=10)),
    "tv_squeezenet1_1": lambda: tvm.squeezenet1_1(num_classes=10),
    "tv_densenet121": lambda: swap_bn(tvm.densenet121(num_classes=10)),
    "tv_regnet_x_400mf": lambda: tvm.regnet_x_400mf(num_classes=10, norm_layer=gn),
    "tv_mnasnet0_5": lambda: swap_bn(tvm.mnasnet0_5(num_classes=10)),
    "tv_googlenet": lambda: swap_bn(tvm.googlenet(num_classes=10, aux_logits=False, init_weights=True)),
    "tv_convnext_tiny": lambda: tvm.convnext_tiny(num_classes=10),
    # ViT-B/16's layers (nn.MultiheadAttention, class token, position embedding), narrowed for 32x32 inputs.
    "tv_vit": lambda: tvm.VisionTransformer(image_size=32, patch_size=4, num_layers=2, num_heads=2, hidden_dim=64,
                                            mlp_dim=128, num_classes=10),
    # Swin's windowed attention is refused (docs/transformers.md); listed so that the audit says so.
    "tv_swin": lambda: tvm.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2], num_heads=[2], window_size=[4, 4],
                                          num_classes=10),
}


def main(out, names):
    torch.set_num_threads(2)
    os.makedirs(out, exist_ok=True)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    for name in names or NETS:
        torch.manual_seed(0)
        path = os.path.join(os.path.abspath(out), name + ".onnx")
        torch.onnx.export(NETS[name]().eval(), torch.randn(2, 3, 32, 32), path, opset_version=13,
                          input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
        r = subprocess.run(["go", "run", "./cmd/gtstorm", "summary", "--model", path, "--dataset", "cifar10"],
                           cwd=root, capture_output=True, text=True)
        line = (r.stdout or r.stderr).strip().splitlines()[0]
        print("%-24s %s" % (name, line), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
