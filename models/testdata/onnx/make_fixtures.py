#!/usr/bin/python3
"""ONNX import fixtures for models/onnximport_test.go (issue 31, item 5: `--model net.onnx`).

Run from the repository root, with Debian's torch and onnx (apt-get install python3-torch python3-onnx
libopenblas0-pthread):

    /usr/bin/python3 models/testdata/onnx/make_fixtures.py [NAME…]

The committed files were made with Debian 12's python3-torch 1.13.1+dfsg-4 (torch.__version__ "1.13.0a0")
and python3-onnx 1.12.0, one thread. Every network is exported by torch.onnx.export at opset 13, in eval
mode, with a dynamic batch dimension ("N"), constant folding on (torch's default), on MNIST's 1×28×28 with
10 classes, so that `gtstorm train --dataset mnist --model FILE.onnx` takes each supported one:

  gn_resnet.onnx     conv3x3 (no bias) → GroupNorm(2) → ReLU; a residual block (conv → GN → ReLU → conv → GN,
                     plus the identity, then ReLU); conv3x3 stride 2 → GN → ReLU → max-pool 2; x.mean((2, 3));
                     Linear. GroupNorm is what torch writes for it at opset 13: Reshape, InstanceNormalization,
                     Reshape (to Shape(x)), Mul, Add.
  mlp_dropout.onnx   x.view(x.size(0), -1) (Shape, Gather, Unsqueeze, Concat, Reshape); Linear (Gemm, transB 1);
                     ReLU; Dropout (exported in training mode so that the node is kept); h @ W + b (MatMul, Add).
  pad_cnn.onnx       F.pad(x, (2, 2, 2, 2)) (a Pad) → conv5x5 → ReLU → max-pool 2 → conv3x3 (padding 1) → ReLU →
                     avg-pool 2 → torch.flatten(x, 1) → Linear.
  maxpool_padding.onnx  max-pool 3 stride 2 padding 1 (MaxPool with pads): a padded MaxPool.
  avgpool_padding.onnx  avg-pool 3 stride 2 padding 1, which torch writes as a Pad then AveragePool: a padded
                     AvgPool (count_include_pad).
  avgpool_exclude_pad.onnx  avg-pool 3 stride 2 padding 1, count_include_pad=False, which torch writes as an
                     AveragePool with pads and count_include_pad 0: Net.AvgPoolExcludePad. Made last (its weights
                     drawn after every other file's), with a gradient fixture (NAME.bin) too.
  linear_nobias.onnx  conv5x5 stride 2 padding 2 (no bias) → ReLU → max-pool 3 stride 2 padding 1 → flatten →
                     Linear(bias=False) → ReLU → Linear(bias=False): torch writes each bias-free Linear as a
                     MatMul alone, which the import takes as Net.DenseNoBias, read by a ReLU and as the output.
                     Made after avgpool_exclude_pad (its weights drawn after every other file's), with NAME.bin.
  mnist_example.onnx  pytorch/examples' MNIST Net, narrower: conv3x3 → ReLU → conv3x3 → ReLU → max-pool 2 →
                     Dropout → flatten → Linear → ReLU → Dropout → Linear → log_softmax (LogSoftmax, axis 1,
                     the graph's output; the loss is torch's cross-entropy of it, which is its nll_loss).
                     Made last, with NAME.bin.
  groupnorm_no_affine.onnx  conv → GroupNorm(2, affine=False) → ReLU → mean → Linear: refused (the import's
                     GroupNorm has a trainable scale and shift). Made last.
  batchnorm.onnx     conv → ReLU → BatchNorm2d → mean → Linear: refused (SPEC §12).
  sigmoid.onnx       conv → Sigmoid → mean → Linear (imported since Sigmoid is supported: the NetSpec round trip).
  activations.onnx   conv3x3 stride 2 → LeakyReLU(0.1) → max-pool 2 → flatten → Linear → Tanh → Linear → Sigmoid →
                     Linear: LeakyRelu (alpha 0.1), Tanh and Sigmoid. Made last, after groupnorm_no_affine (its weights
                     drawn after every other file's), with NAME.bin.

The fixtures below are each drawn from a seed of their own (torch.manual_seed(SEED) before the network is
made), so that they can be made alone without touching the files above: `make_fixtures.py NAME…` makes only
the named ones (of these), and the script without arguments makes every file, those above first, in their
order, then these.

  concat_cnn.onnx    two branches, conv3x3 1→4 → ReLU and conv5x5 1→6 (no activation), joined by
                     torch.cat([a, b], dim=1) (Concat, axis 1) → GroupNorm(2, 10) → ReLU → max-pool 2 → conv3x3
                     stride 2 → ReLU → flatten → Linear. Seed 21, with NAME.bin.
  concat_mlp.onnx    (x - 0.1307) / 0.3081 (Sub and Div of scalar Constants: MNIST's normalisation inside
                     forward) → flatten → three Linear branches of 16 (ReLU), 8 (Tanh) and 4 units joined by
                     torch.cat(…, dim=1) of vectors → Linear. Seed 22, with NAME.bin.
  normalized_input.onnx  on 3×16×16 samples with 10 classes: (x - mean) / std with buffers mean [1,3,1,1]
                     and std [3,1,1] (Sub and Div of per-channel initialisers) → conv3x3 3→8 → ReLU → h·scale +
                     shift with buffers [8,1,1] (Mul and Add per channel) → max-pool 2 → conv3x3 stride 2 → ReLU
                     → flatten → Linear. Seed 23, with NAME.bin.
  silu.onnx          conv3x3 1→6 (padding 1) → nn.SiLU → max-pool 2 → conv3x3 6→8 stride 2 → F.silu → flatten →
                     Linear → nn.SiLU → Linear: torch writes each SiLU at opset 13 as Sigmoid then Mul(x, sigmoid),
                     which the import takes as Net.SiLU. Seed 24, with NAME.bin.
  ceil_pool.onnx     conv3x3 1→6 (padding 1) → ReLU → nn.MaxPool2d(3, 2, ceil_mode=True) (28 → 14: the last window
                     holds 2 rows, a MaxPool with ceil_mode 1) → conv3x3 6→8 → ReLU → nn.AvgPool2d(3, 2, padding=1,
                     ceil_mode=True) (12 → 7: the last window holds a row of the map and one of padding, divided by
                     2·3; torch writes a Pad then an AveragePool with ceil_mode 1) → flatten → Linear: Net's
                     Pooling.Ceil. Seed 25, with NAME.bin.
  mobilenet_block.onnx  a MobileNetV2-style network: conv3x3 1→8 stride 2 padding 1 (no bias) → GroupNorm(2, 8) →
                     nn.ReLU6; an inverted residual block (1×1 conv 8→16, no bias → GroupNorm(4, 16) → ReLU6 →
                     depthwise conv3x3 groups=16 padding 1, no bias → GroupNorm(4, 16) → ReLU6 → 1×1 conv 16→8, no
                     bias → GroupNorm(2, 8), plus the identity); a grouped conv3x3 8→8 groups=2 stride 2 padding 1
                     → nn.Hardtanh(-1, 1); x.mean((2, 3)); Linear. torch writes each grouped Conv2d as a Conv with
                     its group, ReLU6 and Hardtanh as Clip with constant bounds, which the import takes as
                     Conv.Groups and Net.Clamp. Seed 26, with NAME.bin.
  se_head.onnx       a squeeze-and-excitation CNN with a 1×1 convolution classifier: conv3x3 1→8 stride 2 padding 1
                     → GroupNorm(2, 8) → ReLU; an SE block (nn.AdaptiveAvgPool2d(1) → 1×1 conv 8→4 → ReLU → 1×1
                     conv 4→8 → Sigmoid, then x * gate: GlobalAveragePool, Conv, Relu, Conv, Sigmoid and the Mul of
                     [N,8,14,14] and [N,8,1,1]) → conv3x3 8→12 stride 2 padding 1 → ReLU → nn.AdaptiveAvgPool2d(1)
                     → nn.Conv2d(12, 10, 1) → torch.flatten(x, 1). The import takes each 1×1 Conv on a global
                     pool's output as a dense layer and the Mul as Net.ChannelScale. Seed 27, with NAME.bin.
  activations2.onnx  conv3x3 1→6 (padding 1) → nn.ELU(0.5) → max-pool 2 → conv3x3 6→8 stride 2 padding 1 → h·16 →
                     nn.Hardswish → flatten → Linear → nn.GELU → Linear → nn.Softplus → Linear → h·8 →
                     nn.Hardsigmoid → Linear; the scales spread the hard activations' inputs over both kinks (±3).
                     torch writes Elu (alpha 0.5), Softplus, HardSigmoid (alpha 1/6) then Mul(x, it) for Hardswish,
                     HardSigmoid alone for Hardsigmoid, and Div by √2, Erf, Add 1, Mul by x, Mul by 0.5 for GELU,
                     which the import takes as Net.ELU, Softplus, Hardswish, Hardsigmoid and GELU. Seed 28, with
                     NAME.bin.
  shuffle_block.onnx  a ShuffleNetV2-style network: conv3x3 1→8 stride 2 padding 1 → GroupNorm(2, 8) → ReLU; a
                     basic unit (x1, x2 = x.chunk(2, dim=1); the branch of x2: 1×1 conv 4→4 → GroupNorm(2, 4) →
                     ReLU → depthwise conv3x3 groups=4 padding 1 → GroupNorm(2, 4) → 1×1 conv 4→4 → GroupNorm(2, 4)
                     → ReLU; torch.cat((x1, branch), 1)); channel_shuffle(x, 2) (x.view(N, 2, 4, H, W).transpose(1, 2)
                     .contiguous().view(N, 8, H, W): Reshape to 5-D, Transpose perm [0, 2, 1, 3, 4], Reshape back,
                     the shape arithmetic folded); u, v = torch.split(h, [3, 5], dim=1) (a Split along axis 1, its
                     sizes a constant) → torch.cat((v, u[:, 1:3]), 1) (u[:, 1:3] a Slice of the data along axis 1) →
                     conv3x3 7→12 stride 2 padding 1 → ReLU; x.mean((2, 3)); Linear. torch 1.13 writes the chunk as
                     two Slices along axis 1 whose bounds are shape arithmetic on the data's Shape (folded by the
                     import). The import takes each Slice and each output of the Split as Net.Channels and the
                     three nodes of the shuffle as Net.ShuffleChannels. Seed 29, with NAME.bin.
  layernorm.onnx     conv3x3 1→4 stride 2 (padding 1) → nn.LayerNorm([4, 14, 14]) → ReLU → flatten → Linear 784→64
                     → nn.LayerNorm(64) → GELU → Linear: torch writes each LayerNorm at opset 13 as ReduceMean (axes
                     [-3, -2, -1], or [-1]), Sub, Pow 2, ReduceMean, Add ε, Sqrt, Div, Mul by the weight and Add of
                     the bias, which the import takes as Net.LayerNorm. The LayerNorms' weights and biases are
                     perturbed away from 1 and 0 (perturb_group_norms). Seed 30, with NAME.bin.
  factorized_conv.onnx  factorised and dilated convolutions: conv 1→6 kernel (1,3) padding (0,1) → ReLU → conv
                     6→8 kernel (3,1) stride (2,1) padding (1,0) → GroupNorm(2, 8) → ReLU → conv3x3 8→8 dilation
                     2 padding 2 → ReLU → x.mean((2, 3)) → Linear: torch writes each as a Conv with its
                     kernel_shape, strides, pads and dilations, which the import takes as Conv's per-axis fields.
                     Seed 31, with NAME.bin.
  same_pad.onnx      padding that differs between opposite sides, as TensorFlow's "SAME" and EfficientNet-PyTorch's
                     Conv2dStaticSamePadding write it: nn.ZeroPad2d((0, 1, 0, 1)) → conv3x3 1→6 stride 2 → ReLU →
                     F.pad(h, (1, 2, 1, 2)) (nn.Conv2d(padding='same')'s padding of a 4×4 kernel, which torch 1.13
                     cannot export itself) → conv4x4 6→8 → GroupNorm(2, 8) → ReLU → nn.ZeroPad2d((2, 1, 1, 0)) →
                     conv3x3 8→8 stride 2 → ReLU → x.mean((2, 3)) → Linear: torch writes each padding as a Pad
                     (its pads folded shape arithmetic on constants) before a Conv without pads, which the import
                     joins into the Conv as pads [top, left, bottom, right] (Conv.ExtraBottom, ExtraRight).
                     Seed 32, with NAME.bin.
  convnext_block.onnx  a tiny ConvNeXt (facebookresearch/ConvNeXt) on 3×32×32 samples: stem conv 4×4 stride 4 3→8
                     → LayerNorm(data_format="channels_first") (ReduceMean over axis 1, Sub, Pow, ReduceMean, Add
                     ε 1e-6, Sqrt, Div, Mul and Add of [8,1,1]) → Block: depthwise conv 7×7 padding 3 → permute(0, 2,
                     3, 1) → nn.LayerNorm(8) → Linear 8→32 → GELU → Linear 32→8 → gamma · x (a buffer, 0.5 + 0.1·N(0,1):
                     the import takes it as MulConst, a constant) → permute(0, 3, 1, 2) → residual Add → channels_first
                     LayerNorm → conv 2×2 stride 2 8→16 → x.mean([-2, -1]) → nn.LayerNorm(16) → Linear. The import
                     takes each LayerNorm across the channels as Net.ChannelNorm and each Linear on the channels-last
                     tensor (MatMul by [C,K], Add of the bias) as a 1×1 Conv. Seed 33, with NAME.bin.
  vit_tiny.onnx      a tiny timm-style ViT on 3×16×16 samples: patch embedding conv 4×4 stride 4 3→16 →
                     flatten(2).transpose(1, 2) → torch.cat of the class token (an nn.Parameter [1,1,16], Expand)
                     → + pos_embed (an nn.Parameter [1,17,16]) → 2 blocks of x + attn(norm1(x)), x + mlp(norm2(x))
                     (attention: qkv Linear 16→48, reshape [N,T,3,2,8], permute(2,0,3,1,4), unbind, (q @ kᵀ)·8^-½,
                     softmax, @ v, transpose(1,2), reshape, proj Linear; mlp: Linear 16→32, GELU, Linear 32→16) →
                     LayerNorm → x[:, 0] → Linear. The import takes the class token as ClassToken, pos_embed as
                     PositionEmbedding (both trained), the attention between its Linears as Attention and x[:, 0] as
                     Token. Seed 38, with NAME.bin.
  mixer_tiny.onnx    a tiny MLP-Mixer on 3×16×16 samples: patch conv 4×4 stride 4 3→16 → flatten(2).transpose(1, 2)
                     → 2 blocks of x + mlp_tokens(norm1(x).transpose(1, 2)).transpose(1, 2) (Linear 16→8, GELU,
                     Linear 8→16 along the tokens), x + mlp_channels(norm2(x)) → LayerNorm → x.mean(1) → Linear.
                     The import takes each Linear along the tokens as TokenLinear and the mean as GlobalAvgPool.
                     Seed 39, with NAME.bin.
  vit_chunked.onnx   a one-block ViT as lucidrains/vit-pytorch writes it, on 3×16×16 samples: patch conv 4×4 stride 4
                     3→16 → torch.cat((cls.repeat(N, 1, 1), x), dim=1) (Expand, Tile) + pos → x + attn(x) with
                     LayerNorm, a bias-free qkv Linear 16→48, qkv.chunk(3, dim=-1) (three Slices), each reshaped to
                     [N,T,2,8] and transposed (1, 2), q @ k.transpose(-1, -2) (one Transpose perm [0,2,3,1]) · 8^-½,
                     softmax, @ v, transpose and reshape back, Linear 16→16 → x[:, 0] → Linear. Seed 40, with NAME.bin.
  vit_encoder.onnx   a ViT of torch's nn.TransformerEncoderLayer on 3×16×16 samples: patch conv 4×4 stride 4 3→16,
                     class token and position embedding as vit_tiny's, then a pre-norm layer (2 heads, GELU) and a
                     post-norm one (4 heads, ReLU), each nn.MultiheadAttention written by torch sequence-first with the
                     batch folded into the heads (Transpose perm [1,0,2], in_proj MatMul and Add, Slices, Reshapes to
                     [T,N·h,D/h], …, out_proj Gemm), then LayerNorm → x[:, 0] → Linear. The import takes each attention as
                     the in_proj and out_proj 1×1 Convs around Attention. Seed 41, with NAME.bin.
  vit_seqfirst.onnx  the same kept sequence-first, [T,N,D] (nn.TransformerEncoder's default batch_first=False, two
                     pre-norm GELU layers): x.flatten(2).permute(2, 0, 1), the class token concatenated along axis 0,
                     a position embedding [17,1,16], LayerNorm → x[0] → Linear. Seed 42, with NAME.bin.
  vit_patches.onnx   lucidrains/vit-pytorch's patch embedding on 3×16×16 samples: its Rearrange('b c (h p1) (w p2) ->
                     b (h w) (p1 p2 c)') of 4×4 patches written as x.reshape(b, c, 4, 4, 4, 4).permute(0, 2, 4, 3, 5,
                     1).reshape(b, 16, 48) (Reshape, Transpose, Reshape) → LayerNorm(48) → Linear 48→16 → LayerNorm(16)
                     → + pos_embedding [1,16,16] → one vit_tiny block → LayerNorm → x.mean(dim=1) → Linear. The import
                     takes the patchify as Net.Patches (pixel-major). Seed 43, with NAME.bin.
  vit_variants.onnx  on 3×16×16 samples: patch conv 4×4 stride 4 3→16; DeiT's class and distillation tokens,
                     torch.cat((cls, dist, x), dim=1) (two ClassTokens) + pos_embed [1,18,16]; a pre-norm block of
                     Hugging Face's ViTSelfAttention (query, key and value Linears of their own, each viewed into 2 heads
                     and permuted, scores / √8; the import concatenates the three Linears' outputs into Attention's
                     qkv) times timm's LayerScale gamma [16] (trained); a pre-norm block of an einsum attention
                     (chunked bias-free qkv, 4 heads, Einsum "bhid,bhjd->bhij" and "bhij,bhjd->bhid"); a pre-norm
                     GELU MLP; LayerNorm; (head(x[:, 0]) + head_dist(x[:, 1])) / 2 + head_avg(x[:, 2:].mean(dim=1))
                     (Token, TokenRange, GlobalAvgPool). Seed 44, with NAME.bin.
  poolformer_tiny.onnx  PoolFormer on 3×16×16 samples: patch conv 4×4 stride 4 3→16; GroupNorm(1, 16) y; x +
                     ls1 · (AvgPool2d(3, 1, 1, count_include_pad=False)(y) − y) (Sub of two tensors: Net.Sub); x + ls2 ·
                     mlp(GroupNorm(1, 16)(x)) (1×1 convolutions, GELU); GroupNorm; mean; Linear. The layer scales are
                     nn.Parameters [16], used unsqueezed: exported without constant folding, they keep their names,
                     which the test gives as ImportOptions.Trainable ("layer_scale*"), so that they train as torch
                     trains them (folded, torch would name them onnx::Mul_*). Seed 45, with NAME.bin.
  fixup_tiny.onnx    Fixup's basic block on 3×16×16 samples: conv3x3 stride 2 3→8 → ReLU = x; relu(conv1 stride 2(x +
                     bias1a) + bias1b); conv2(· + bias2a) · scale + bias2b; relu(downsample(x + bias1a) + ·), the
                     downsample a 1×1 conv stride 2 (bias1a read twice); + alpha · tanh(1×1 conv(·)) (ReZero's branch);
                     mean; + bias3; Linear. Its seven scalars are nn.Parameters [1] that torch's export keeps under
                     their names; the test names them trainable (ImportOptions.Trainable), and they import as Net.Shift
                     and Net.Scale, bias1a's second reader as Net.ShiftLike. Seed 46, with NAME.bin.
  cct_tiny.onnx      a Compact Convolutional Transformer on 3×16×16 samples: conv3x3 3→16 (no bias) → ReLU → max-pool 3
                     stride 2 padding 1 → flatten(2).transpose(-2, -1) + pos_embed [1,64,16] → one vit_tiny block →
                     LayerNorm → SeqPool: softmax(Linear 16→1, dim=1).transpose(-1, -2) @ x, squeeze(-2) (Softmax,
                     Transpose, MatMul, Squeeze: Net.AttentionPool) → Linear. Seed 47, with NAME.bin.
  gn_swap.onnx       torchvision's BatchNorm swapped for nn.GroupNorm(min(32, C), C), on 3×16×16 samples: conv3x3
                     3→8 → GroupNorm(8, 8) → ReLU → conv3x3 stride 2 8→16 → GroupNorm(16, 16) → ReLU → conv1x1 16→32 →
                     GroupNorm(32, 32) → ReLU → mean → Linear. A GroupNorm of one channel a group is Reshape [N,C,−1], which
                     reads as flatten(2), then InstanceNormalization. Seed 48, with NAME.bin.
  resmlp_tiny.onnx   ResMLP (Touvron et al. 2021, facebookresearch/deit's resmlp_models.py) on 3×16×16 samples: 4×4
                     patches of 16 → flatten(2).transpose(1, 2); a block: x + gamma_1 · Linear over the 16 patches of
                     Affine(x) (alpha · x + beta, parameters [16]); x + gamma_2 · MLP(Affine(x)); Affine; mean(1);
                     Linear. The alphas and gammas multiply a channels-last tensor (LayerScale, trained); the betas
                     are added to it, which the test names trainable (ImportOptions.Trainable "*beta": ChannelShift).
                     Seed 49, with NAME.bin.
  gmlp_tiny.onnx     gMLP (Liu et al. 2021) on 3×16×16 samples: 4×4 patches of 16 → flatten(2).transpose(1, 2); two
                     blocks x + Linear(SGU(GELU(Linear 16→64(LayerNorm(x))))), the spatial gating unit
                     u, v = x.chunk(2, dim=-1); u * proj(LayerNorm(v)) — proj lucidrains' nn.Conv1d(16, 16, 1) over the
                     tokens in the first block, timm's nn.Linear(16, 16) of v.transpose(-1, -2) in the second — then
                     a SwiGLU MLP, x + Linear(silu(Linear(x)) * Linear(x)); mean(1); Linear. Net.Mul for the products,
                     Channels for the halves, TokenLinear for proj. Seed 50, with NAME.bin.
  cct_shi.onnx       a Compact Convolutional Transformer as SHI-Labs/Compact-Transformers writes it (Tokenizer,
                     Attention, TransformerEncoderLayer, TransformerClassifier with seq_pool), CCT-2/3x2 narrowed to
                     width 16 and 2 heads, MLP ratio 1, on 3×16×16 samples: conv3x3 3→64 → ReLU → max-pool 3 stride 2
                     padding 1 → conv3x3 64→16 → ReLU → max-pool; + positional_emb; 2 layers src + attn(pre_norm(src)),
                     norm1, src + linear2(gelu(linear1(src))); LayerNorm; SeqPool; Linear. The zoo's cct:2,2,1,16/3x2
                     has its parameters, and its bits (TestCCTIsSHILabs). Seed 51, with NAME.bin.
  cosine_head.onnx   a cosine classifier on 3×16×16 samples: conv3x3 3→16 → ReLU → max-pool 2 → conv3x3 stride 2 16→32 →
                     ReLU → mean → Linear 32→24 → F.normalize(dim=1) (ReduceL2, Clip min 1e-12, Expand, Div:
                     Net.L2Normalize) → Linear without bias → · 10. Seed 52, with NAME.bin.
  lrn_cnn.onnx       the TensorFlow tutorial's CIFAR-10 CNN (FedAvg's), narrowed, on 3×16×16 samples: conv5x5 3→8
                     (padding 2) → ReLU → max-pool 3 stride 2 padding 1 → nn.LocalResponseNorm(4, 1e-2, 0.75, 1) → conv5x5
                     8→8 → ReLU → nn.LocalResponseNorm(5, 0.1, 0.75, 2) → max-pool → flatten → Linear. torch writes each
                     LRN as its F.local_response_norm traced: Mul, Unsqueeze, Reshape, two Pads, AveragePool, an If
                     around a Squeeze, Reshape, Mul, Add, Pow, Div (Net.LocalResponseNorm). Seed 53, with NAME.bin.

For each supported network the script also writes NAME.bin: a batch of 4 byte images and labels drawn with
torch.manual_seed, fed as gtstorm feeds a dataset of bytes (float32(byte)·float32(1/255)), and torch's float32
logits, batch-mean cross-entropy and its gradient with respect to every parameter (by torch's parameter
name, in torch's layout: a Linear's weight is [out,in]); the loss and gradient norm again in float64 as a
reference for float32's rounding. Dropout is left out of the gradient: the network is evaluated in eval mode
(Dropout the identity); the Go test compares it with the import's Dropout rate set to 0 (gtstorm's seeded
masks are not torch's). The format is models/testdata/torch's: the 8 bytes
"GTSTORCH", a uint32 (little-endian) header length, the JSON header, then the payload (the images, uint8
NCHW; the logits, float32; each gradient, float32 little-endian, at the offsets the header gives).

The weights are torch's default initialisation of torch.manual_seed(7), with GroupNorm's scale and shift
moved off 1 and 0 (1 + 0.2·N(0,1), 0.2·N(0,1)) so that they matter; the .onnx files hold them as initialisers.
"""

import hashlib
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"GTSTORCH"
SHAPE, CLASSES, BATCH = (1, 28, 28), 10, 4


class GNResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1, 1, bias=False)
        self.gn1 = nn.GroupNorm(2, 8)
        self.block_conv1 = nn.Conv2d(8, 8, 3, 1, 1, bias=False)
        self.block_gn1 = nn.GroupNorm(2, 8)
        self.block_conv2 = nn.Conv2d(8, 8, 3, 1, 1, bias=False)
        self.block_gn2 = nn.GroupNorm(2, 8)
        self.down = nn.Conv2d(8, 16, 3, 2, 1, bias=False)
        self.gn2 = nn.GroupNorm(2, 16)
        self.fc = nn.Linear(16, CLASSES)

    def forward(self, x):
        h = F.relu(self.gn1(self.conv1(x)))
        r = F.relu(self.block_gn1(self.block_conv1(h)))
        h = F.relu(self.block_gn2(self.block_conv2(r)) + h)
        h = F.max_pool2d(F.relu(self.gn2(self.down(h))), 2)
        return self.fc(h.mean((2, 3)))


class MLPDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.drop = nn.Dropout(0.25)
        self.w2 = nn.Parameter(torch.empty(32, CLASSES).uniform_(-32 ** -0.5, 32 ** -0.5))
        self.b2 = nn.Parameter(torch.empty(CLASSES).uniform_(-32 ** -0.5, 32 ** -0.5))

    def forward(self, x):
        h = self.drop(F.relu(self.fc1(x.view(x.size(0), -1))))
        return h @ self.w2 + self.b2


class PadCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 7 * 7, CLASSES)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv1(F.pad(x, (2, 2, 2, 2)))), 2)
        h = F.avg_pool2d(F.relu(self.conv2(h)), 2)
        return self.fc(torch.flatten(h, 1))


class PoolPadding(nn.Module):
    def __init__(self, pool):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.pool = pool
        self.fc = nn.Linear(4, CLASSES)

    def forward(self, x):
        return self.fc(self.pool(F.relu(self.conv(x))).mean((2, 3)))


class WithBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, CLASSES)

    def forward(self, x):
        return self.fc(self.bn(F.relu(self.conv(x))).mean((2, 3)))


class WithSigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4, CLASSES)

    def forward(self, x):
        return self.fc(torch.sigmoid(self.conv(x)).mean((2, 3)))


class LinearNoBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 5, stride=2, padding=2, bias=False)
        self.fc1 = nn.Linear(4 * 7 * 7, 32, bias=False)
        self.fc2 = nn.Linear(32, CLASSES, bias=False)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv(x)), 3, 2, 1)
        return self.fc2(F.relu(self.fc1(torch.flatten(h, 1))))


class MNISTExample(nn.Module):
    """pytorch/examples' mnist/main.py Net, narrower (4 and 8 maps, 16 hidden units): it ends in log_softmax."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(8 * 12 * 12, 16)
        self.fc2 = nn.Linear(16, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = self.fc1(torch.flatten(self.dropout1(x), 1))
        x = self.fc2(self.dropout2(F.relu(x)))
        return F.log_softmax(x, dim=1)


class GroupNormNoAffine(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, bias=False)
        self.gn = nn.GroupNorm(2, 4, affine=False)
        self.fc = nn.Linear(4, CLASSES)

    def forward(self, x):
        return self.fc(F.relu(self.gn(self.conv(x))).mean((2, 3)))


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, 2, 1)
        self.fc1 = nn.Linear(4 * 7 * 7, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(nn.LeakyReLU(0.1)(self.conv(x)), 2)
        x = torch.tanh(self.fc1(torch.flatten(x, 1)))
        return self.fc3(torch.sigmoid(self.fc2(x)))


class ConcatCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(1, 4, 3, padding=1)
        self.b = nn.Conv2d(1, 6, 5, padding=2)
        self.gn = nn.GroupNorm(2, 10)
        self.conv = nn.Conv2d(10, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 7 * 7, CLASSES)

    def forward(self, x):
        h = torch.cat([F.relu(self.a(x)), self.b(x)], dim=1)
        h = F.max_pool2d(F.relu(self.gn(h)), 2)
        return self.fc(torch.flatten(F.relu(self.conv(h)), 1))


class ConcatMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_a = nn.Linear(784, 16)
        self.fc_b = nn.Linear(784, 8)
        self.fc_c = nn.Linear(784, 4)
        self.fc = nn.Linear(28, CLASSES)

    def forward(self, x):
        f = torch.flatten((x - 0.1307) / 0.3081, 1)
        h = torch.cat([F.relu(self.fc_a(f)), torch.tanh(self.fc_b(f)), self.fc_c(f)], dim=1)
        return self.fc(h)


class NormalizedInput(nn.Module):
    SHAPE = (3, 16, 16)

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.4914, 0.4822, 0.4465]).reshape(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.2470, 0.2435, 0.2616]).reshape(3, 1, 1))
        self.register_buffer("scale", (1 + 0.5 * torch.randn(8)).reshape(8, 1, 1))
        self.register_buffer("shift", (0.2 * torch.randn(8)).reshape(8, 1, 1))
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, CLASSES)

    def forward(self, x):
        x = (x - self.mean) / self.std
        h = F.relu(self.conv1(x)) * self.scale + self.shift
        h = F.relu(self.conv2(F.max_pool2d(h, 2)))
        return self.fc(torch.flatten(h, 1))


class SiLUCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2, padding=1)
        self.fc1 = nn.Linear(8 * 7 * 7, 16)
        self.fc2 = nn.Linear(16, CLASSES)
        self.act = nn.SiLU()

    def forward(self, x):
        h = F.max_pool2d(self.act(self.conv1(x)), 2)
        h = F.silu(self.conv2(h))
        return self.fc2(self.act(self.fc1(torch.flatten(h, 1))))


class MobileNetBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 8, 3, stride=2, padding=1, bias=False)
        self.stem_gn = nn.GroupNorm(2, 8)
        self.expand = nn.Conv2d(8, 16, 1, bias=False)
        self.expand_gn = nn.GroupNorm(4, 16)
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False)
        self.depthwise_gn = nn.GroupNorm(4, 16)
        self.project = nn.Conv2d(16, 8, 1, bias=False)
        self.project_gn = nn.GroupNorm(2, 8)
        self.grouped = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.relu6 = nn.ReLU6()
        self.hardtanh = nn.Hardtanh(-1, 1)
        self.fc = nn.Linear(8, CLASSES)

    def forward(self, x):
        h = self.relu6(self.stem_gn(self.stem(x)))
        r = self.relu6(self.expand_gn(self.expand(h)))
        r = self.relu6(self.depthwise_gn(self.depthwise(r)))
        h = self.project_gn(self.project(r)) + h
        h = self.hardtanh(self.grouped(h))
        return self.fc(h.mean((2, 3)))


def channel_shuffle(x, groups):
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).contiguous().view(n, c, h, w)


class ShuffleBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.stem_gn = nn.GroupNorm(2, 8)
        self.pw1 = nn.Conv2d(4, 4, 1, bias=False)
        self.pw1_gn = nn.GroupNorm(2, 4)
        self.dw = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.dw_gn = nn.GroupNorm(2, 4)
        self.pw2 = nn.Conv2d(4, 4, 1, bias=False)
        self.pw2_gn = nn.GroupNorm(2, 4)
        self.down = nn.Conv2d(7, 12, 3, stride=2, padding=1)
        self.fc = nn.Linear(12, CLASSES)

    def forward(self, x):
        h = F.relu(self.stem_gn(self.stem(x)))
        x1, x2 = h.chunk(2, dim=1)
        b = F.relu(self.pw1_gn(self.pw1(x2)))
        b = self.dw_gn(self.dw(b))
        b = F.relu(self.pw2_gn(self.pw2(b)))
        h = channel_shuffle(torch.cat((x1, b), 1), 2)
        u, v = torch.split(h, [3, 5], dim=1)
        h = F.relu(self.down(torch.cat((v, u[:, 1:3]), 1)))
        return self.fc(h.mean((2, 3)))


class CeilPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
        self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.conv2 = nn.Conv2d(6, 8, 3)
        self.pool2 = nn.AvgPool2d(3, 2, padding=1, ceil_mode=True)
        self.fc = nn.Linear(8 * 7 * 7, CLASSES)

    def forward(self, x):
        h = self.pool1(F.relu(self.conv1(x)))
        h = self.pool2(F.relu(self.conv2(h)))
        return self.fc(torch.flatten(h, 1))


class SEHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.squeeze = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(8, 4, 1)
        self.expand = nn.Conv2d(4, 8, 1)
        self.conv2 = nn.Conv2d(8, 12, 3, stride=2, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Conv2d(12, CLASSES, 1)

    def forward(self, x):
        h = F.relu(self.gn(self.conv1(x)))
        gate = torch.sigmoid(self.expand(F.relu(self.reduce(self.squeeze(h)))))
        h = F.relu(self.conv2(h * gate))
        return torch.flatten(self.classifier(self.pool(h)), 1)


class Activations2(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2, padding=1)
        self.fc1 = nn.Linear(8 * 7 * 7, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 16)
        self.fc4 = nn.Linear(16, CLASSES)
        self.elu, self.hardswish, self.gelu = nn.ELU(0.5), nn.Hardswish(), nn.GELU()
        self.softplus, self.hardsigmoid = nn.Softplus(), nn.Hardsigmoid()

    def forward(self, x):
        h = F.max_pool2d(self.elu(self.conv1(x)), 2)
        h = self.hardswish(self.conv2(h) * 16)
        h = self.softplus(self.fc2(self.gelu(self.fc1(torch.flatten(h, 1)))))
        return self.fc4(self.hardsigmoid(self.fc3(h) * 8))


class LayerNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, stride=2, padding=1)
        self.ln1 = nn.LayerNorm([4, 14, 14])
        self.fc1 = nn.Linear(4 * 14 * 14, 64)
        self.ln2 = nn.LayerNorm(64)
        self.gelu = nn.GELU()
        self.fc2 = nn.Linear(64, CLASSES)

    def forward(self, x):
        h = F.relu(self.ln1(self.conv(x)))
        h = self.gelu(self.ln2(self.fc1(torch.flatten(h, 1))))
        return self.fc2(h)


class FactorizedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, (1, 3), padding=(0, 1))
        self.conv2 = nn.Conv2d(6, 8, (3, 1), stride=(2, 1), padding=(1, 0))
        self.gn = nn.GroupNorm(2, 8)
        self.conv3 = nn.Conv2d(8, 8, 3, dilation=2, padding=2)
        self.fc = nn.Linear(8, CLASSES)

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = F.relu(self.gn(self.conv2(h)))
        h = F.relu(self.conv3(h))
        return self.fc(h.mean((2, 3)))


class SamePad(nn.Module):
    def __init__(self):
        super().__init__()
        self.pad1 = nn.ZeroPad2d((0, 1, 0, 1))
        self.conv1 = nn.Conv2d(1, 6, 3, stride=2)
        self.conv2 = nn.Conv2d(6, 8, 4)
        self.gn = nn.GroupNorm(2, 8)
        self.pad3 = nn.ZeroPad2d((2, 1, 1, 0))
        self.conv3 = nn.Conv2d(8, 8, 3, stride=2)
        self.fc = nn.Linear(8, CLASSES)

    def forward(self, x):
        h = F.relu(self.conv1(self.pad1(x)))
        h = F.relu(self.gn(self.conv2(F.pad(h, (1, 2, 1, 2)))))
        h = F.relu(self.conv3(self.pad3(h)))
        return self.fc(h.mean((2, 3)))


class LayerNormCF(nn.Module):
    """ConvNeXt's LayerNorm(data_format="channels_first"), as facebookresearch/ConvNeXt writes it."""
    def __init__(self, c, eps=1e-6):
        super().__init__()
        self.weight, self.bias, self.eps = nn.Parameter(torch.ones(c)), nn.Parameter(torch.zeros(c)), eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class ConvNeXtBlock(nn.Module):
    """ConvNeXt's Block (facebookresearch/ConvNeXt): dwconv 7×7 → permute → LayerNorm → Linear → GELU → Linear →
    gamma · x (a parameter, layer scale) → permute back → residual."""
    def __init__(self, c):
        super().__init__()
        self.dwconv = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.pwconv1, self.act, self.pwconv2 = nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(0.5 + 0.1 * torch.randn(c))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.gamma * self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXtTiny(nn.Module):
    SHAPE = (3, 32, 32)

    def __init__(self):
        super().__init__()
        self.stem, self.stem_norm = nn.Conv2d(3, 8, 4, stride=4), LayerNormCF(8)
        self.block = ConvNeXtBlock(8)
        self.down_norm, self.down = LayerNormCF(8), nn.Conv2d(8, 16, 2, stride=2)
        self.norm, self.head = nn.LayerNorm(16, eps=1e-6), nn.Linear(16, CLASSES)

    def forward(self, x):
        x = self.block(self.stem_norm(self.stem(x)))
        x = self.down(self.down_norm(x))
        return self.head(self.norm(x.mean([-2, -1])))


class PReLUNet(nn.Module):
    """nn.PReLU with a slope a channel on maps and on features, and one shared slope."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.act1 = nn.PReLU(6)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2)
        self.act2 = nn.PReLU()
        self.fc1 = nn.Linear(8, 16)
        self.act3 = nn.PReLU(16)
        self.fc2 = nn.Linear(16, CLASSES)
        with torch.no_grad():
            for a in (self.act1, self.act2, self.act3):
                a.weight.copy_(0.1 + 0.3 * torch.rand_like(a.weight))

    def forward(self, x):
        h = F.max_pool2d(self.act1(self.conv1(x)), 2)
        h = self.act2(self.conv2(h))
        return self.fc2(self.act3(self.fc1(h.mean((2, 3)))))


class GlobalMax(nn.Module):
    """Global max pooling: fastai's AdaptiveConcatPool2d (max and mean of the maps, concatenated) and x.amax."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2)
        self.fc = nn.Linear(24, CLASSES)

    def forward(self, x):
        h = F.max_pool2d(torch.tanh(self.conv1(x)), 2)
        h = torch.tanh(self.conv2(h))
        a = torch.cat([F.adaptive_max_pool2d(h, 1), F.adaptive_avg_pool2d(h, 1)], 1).flatten(1)
        return self.fc(torch.cat([a, h.amax((2, 3))], 1))


class LayerNorm2dTV(nn.LayerNorm):
    """torchvision's LayerNorm2d (convnext.py): permute, F.layer_norm over the channels, permute back."""
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlockTV(nn.Module):
    """torchvision's CNBlock: the layer scale a [C,1,1] parameter applied after permuting back."""
    def __init__(self, c):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(c, c, 7, padding=3, groups=c), Permute(0, 2, 3, 1), nn.LayerNorm(c, eps=1e-6),
                                   nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c), Permute(0, 3, 1, 2))
        self.layer_scale = nn.Parameter(0.5 + 0.1 * torch.randn(c, 1, 1))

    def forward(self, x):
        return x + self.layer_scale * self.block(x)


class Permute(nn.Module):
    def __init__(self, *dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return x.permute(*self.dims)


class ConvNeXtTV(nn.Module):
    """A tiny torchvision-style ConvNeXt: stem with LayerNorm2d, a CNBlock, a downsampling layer, and the head
    AdaptiveAvgPool2d(1) → LayerNorm2d → Flatten → Linear."""
    SHAPE = (3, 32, 32)

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 4, stride=4), LayerNorm2dTV(8, eps=1e-6))
        self.block = CNBlockTV(8)
        self.down = nn.Sequential(LayerNorm2dTV(8, eps=1e-6), nn.Conv2d(8, 16, 2, stride=2))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), LayerNorm2dTV(16, eps=1e-6), nn.Flatten(1), nn.Linear(16, CLASSES))

    def forward(self, x):
        return self.head(self.down(self.block(self.stem(x))))


class ViTAttention(nn.Module):
    """timm's ViT attention: qkv Linear, heads split by reshape and permute, softmax(q·kᵀ·scale)·v, proj Linear."""
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)

class TokenMlp(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = nn.Linear(d, h); self.act = nn.GELU(); self.fc2 = nn.Linear(h, d)
    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))

class ViTBlock(nn.Module):
    def __init__(self, d, heads, h):
        super().__init__()
        self.norm1 = nn.LayerNorm(d, eps=1e-6); self.attn = ViTAttention(d, heads)
        self.norm2 = nn.LayerNorm(d, eps=1e-6); self.mlp = TokenMlp(d, h)
    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))

class ViTTiny(nn.Module):
    """A tiny timm-style ViT: 4×4 patches, class token, position embedding, 2 pre-norm blocks, x[:, 0] head."""
    SHAPE = (3, 16, 16)
    def __init__(self, d=16, heads=2, depth=2, patch=4):
        super().__init__()
        t = (16 // patch) ** 2
        self.patch_embed = nn.Conv2d(3, d, patch, stride=patch)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, t + 1, d))
        self.blocks = nn.Sequential(*[ViTBlock(d, heads, 2 * d) for _ in range(depth)])
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, CLASSES)
    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        x = x + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])

class MixerBlock(nn.Module):
    def __init__(self, t, d, th, ch):
        super().__init__()
        self.norm1 = nn.LayerNorm(d, eps=1e-6); self.mlp_tokens = TokenMlp(t, th)
        self.norm2 = nn.LayerNorm(d, eps=1e-6); self.mlp_channels = TokenMlp(d, ch)
    def forward(self, x):
        x = x + self.mlp_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.mlp_channels(self.norm2(x))

class MixerTiny(nn.Module):
    """A tiny MLP-Mixer: 4×4 patches, 2 blocks of token and channel MLPs, mean over the tokens."""
    SHAPE = (3, 16, 16)
    def __init__(self, d=16, patch=4, depth=2):
        super().__init__()
        t = (16 // patch) ** 2
        self.stem = nn.Conv2d(3, d, patch, stride=patch)
        self.blocks = nn.Sequential(*[MixerBlock(t, d, 8, 32) for _ in range(depth)])
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, CLASSES)
    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        x = self.norm(self.blocks(x))
        return self.head(x.mean(dim=1))


class ChunkedAttention(nn.Module):
    """lucidrains/vit-pytorch's Attention, einops written out."""
    def __init__(s, dim, heads=2, dim_head=8):
        super().__init__()
        inner = dim_head * heads
        s.heads, s.scale = heads, dim_head ** -0.5
        s.norm = nn.LayerNorm(dim)
        s.to_qkv = nn.Linear(dim, inner * 3, bias=False)
        s.to_out = nn.Sequential(nn.Linear(inner, dim), nn.Dropout(0.0))
    def forward(s, x):
        x = s.norm(x)
        b, n, _ = x.shape
        q, k, v = [t.reshape(b, n, s.heads, -1).transpose(1, 2) for t in s.to_qkv(x).chunk(3, dim=-1)]
        dots = torch.matmul(q, k.transpose(-1, -2)) * s.scale
        attn = dots.softmax(dim=-1)
        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return s.to_out(out)
class ViTChunked(nn.Module):
    SHAPE = (3, 16, 16)
    """A ViT as lucidrains/vit-pytorch writes it: cls_token.repeat, chunked bias-free qkv."""

    def __init__(s, d=16):
        super().__init__()
        s.pe = nn.Conv2d(3, d, 4, stride=4); s.pos = nn.Parameter(torch.randn(1,17,d)*.02); s.cls = nn.Parameter(torch.randn(1,1,d))
        s.attn = ChunkedAttention(d); s.head = nn.Linear(d, CLASSES)
    def forward(s, x):
        x = s.pe(x).flatten(2).transpose(1,2)
        b = x.shape[0]
        x = torch.cat((s.cls.repeat(b, 1, 1), x), dim=1) + s.pos
        x = x + s.attn(x)
        return s.head(x[:, 0])


class ViTEncoder(nn.Module):
    """A ViT of PyTorch's own nn.TransformerEncoderLayer (nn.MultiheadAttention inside): a pre-norm GELU layer, then a
    post-norm ReLU one."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, 4, stride=4)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, 17, d))
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, activation="gelu", batch_first=True, norm_first=True),
            nn.TransformerEncoderLayer(d, 4, 32, dropout=0.0, batch_first=True)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x)[:, 0])


class ViTSeqFirst(nn.Module):
    """A ViT kept sequence-first ([T,N,D], nn.TransformerEncoder's default batch_first=False): class token and
    position embedding added there, x[0] read out."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, 4, stride=4)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(17, 1, d))
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, activation="gelu", norm_first=True), 2,
                                             enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).permute(2, 0, 1)  # [T,N,D]
        x = torch.cat((self.cls_token.expand(-1, x.shape[1], -1), x), dim=0) + self.pos_embed
        return self.head(self.norm(self.encoder(x))[0])


class ViTPatches(nn.Module):
    """lucidrains/vit-pytorch's ViT patch embedding, its Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)') written
    as reshape/permute/reshape, LayerNorm, Linear, LayerNorm, then + pos_embedding, a pre-norm block and the mean."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=16, patch=4):
        super().__init__()
        self.patch = patch
        f = 3 * patch * patch
        self.norm_in = nn.LayerNorm(f)
        self.linear = nn.Linear(f, d)
        self.norm_embed = nn.LayerNorm(d)
        self.pos_embedding = nn.Parameter(torch.randn(1, (16 // patch) ** 2, d))
        self.block = ViTBlock(d, 2, 32)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x):
        b, c, h, w = x.shape
        p = self.patch
        x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)
        x = self.norm_embed(self.linear(self.norm_in(x))) + self.pos_embedding
        x = self.norm(self.block(x))
        return self.head(x.mean(dim=1))


class HFSelfAttention(nn.Module):
    """Hugging Face's ViTSelfAttention and ViTSelfOutput: q, k and v Linears of their own, transpose_for_scores,
    scores / sqrt(D/h), softmax, context permuted and viewed back, output Linear."""
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.dense = nn.Linear(d, d)

    def split(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.dh)).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        context = torch.matmul(nn.functional.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return self.dense(context.view(context.size()[:-2] + (self.heads * self.dh,)))


class EinsumAttention(nn.Module):
    """lucidrains/vit-pytorch's earlier Attention: chunked qkv, einsum for the scores and the output."""
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.scale = heads, (d // heads) ** -0.5
        self.to_qkv = nn.Linear(d, 3 * d, bias=False)
        self.to_out = nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = [t.reshape(b, n, self.heads, -1).permute(0, 2, 1, 3) for t in self.to_qkv(x).chunk(3, dim=-1)]
        attn = (torch.einsum("bhid,bhjd->bhij", q, k) * self.scale).softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        return self.to_out(out.permute(0, 2, 1, 3).reshape(b, n, d))


class ViTVariants(nn.Module):
    """DeiT's class and distillation tokens, a Hugging Face attention with timm's LayerScale, an einsum attention, and
    a readout of both tokens' heads and of the patch tokens' mean (timm's x[:, 2:].mean(1))."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, 4, stride=4)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.dist_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, 18, d))
        self.norm1, self.attn1 = nn.LayerNorm(d), HFSelfAttention(d, 2)
        self.gamma1 = nn.Parameter(1 + 0.3 * torch.randn(d))
        self.norm2, self.attn2 = nn.LayerNorm(d), EinsumAttention(d, 4)
        self.norm3, self.mlp = nn.LayerNorm(d), TokenMlp(d, 2 * d)
        self.norm = nn.LayerNorm(d)
        self.head, self.head_dist, self.head_avg = nn.Linear(d, CLASSES), nn.Linear(d, CLASSES), nn.Linear(d, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        n = x.shape[0]
        x = torch.cat((self.cls_token.expand(n, -1, -1), self.dist_token.expand(n, -1, -1), x), dim=1) + self.pos_embed
        x = x + self.attn1(self.norm1(x)) * self.gamma1
        x = x + self.attn2(self.norm2(x))
        x = self.norm(x + self.mlp(self.norm3(x)))
        return (self.head(x[:, 0]) + self.head_dist(x[:, 1])) / 2 + self.head_avg(x[:, 2:].mean(dim=1))


class PoolFormerTiny(nn.Module):
    """PoolFormer's block (MetaFormer, Yu et al. 2022): GroupNorm(1, C), the token mixer pool(y) − y, layer scales [C]
    applied as ls.unsqueeze(-1).unsqueeze(-1) * x, a 1×1-convolution GELU MLP. Its modules are registered in the
    order forward reads them, so that torch's parameters come in the Net's order. Exported without constant folding,
    so that the layer scales keep their names (Unsqueeze nodes of layer_scale1 and layer_scale2)."""
    SHAPE = (3, 16, 16)
    FOLD = False

    def __init__(self, d=16):
        super().__init__()
        self.stem = nn.Conv2d(3, d, 4, stride=4)
        self.norm1 = nn.GroupNorm(1, d)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.layer_scale1 = nn.Parameter(1 + 0.3 * torch.randn(d))
        self.norm2 = nn.GroupNorm(1, d)
        self.mlp = nn.Sequential(nn.Conv2d(d, 2 * d, 1), nn.GELU(), nn.Conv2d(2 * d, d, 1))
        self.layer_scale2 = nn.Parameter(1 + 0.3 * torch.randn(d))
        self.norm = nn.GroupNorm(1, d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x):
        x = self.stem(x)
        y = self.norm1(x)
        x = x + self.layer_scale1.unsqueeze(-1).unsqueeze(-1) * (self.pool(y) - y)
        x = x + self.layer_scale2.unsqueeze(-1).unsqueeze(-1) * self.mlp(self.norm2(x))
        return self.head(self.norm(x).mean([-2, -1]))


class FixupTiny(nn.Module):
    """Fixup's basic block (hongyi-zhang/Fixup) with a stride-2 downsample of x + bias1a (bias1a read twice), then a
    ReZero branch alpha · tanh(conv(x)): scalar nn.Parameters added to and multiplying the data, which torch's export
    keeps under their names. Drawn at random rather than at Fixup's 0 and 1, so that each one's gradient shows."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=8):
        super().__init__()
        self.stem = nn.Conv2d(3, d, 3, stride=2, padding=1)
        self.bias1a = nn.Parameter(0.1 * torch.randn(1))
        self.conv1 = nn.Conv2d(d, d, 3, stride=2, padding=1, bias=False)
        self.bias1b = nn.Parameter(0.1 * torch.randn(1))
        self.bias2a = nn.Parameter(0.1 * torch.randn(1))
        self.conv2 = nn.Conv2d(d, d, 3, padding=1, bias=False)
        self.scale = nn.Parameter(1 + 0.2 * torch.randn(1))
        self.bias2b = nn.Parameter(0.1 * torch.randn(1))
        self.downsample = nn.Conv2d(d, d, 1, stride=2, bias=False)
        self.branch = nn.Conv2d(d, d, 1)
        self.alpha = nn.Parameter(0.5 + 0.1 * torch.randn(1))
        self.bias3 = nn.Parameter(0.1 * torch.randn(1))
        self.fc = nn.Linear(d, CLASSES)

    def forward(self, x):
        x = F.relu(self.stem(x))
        out = F.relu(self.conv1(x + self.bias1a) + self.bias1b)
        out = self.conv2(out + self.bias2a) * self.scale + self.bias2b
        x = F.relu(self.downsample(x + self.bias1a) + out)
        x = x + self.alpha * torch.tanh(self.branch(x))
        return self.fc(x.mean((2, 3)) + self.bias3)


class CCTTiny(nn.Module):
    """A Compact Convolutional Transformer (SHI-Labs/Compact-Transformers): a convolutional tokenizer, a position
    embedding, one pre-norm block, and sequence pooling (SeqPool) instead of a class token."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=16):
        super().__init__()
        self.tokenizer = nn.Sequential(nn.Conv2d(3, d, 3, padding=1, bias=False), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, 64, d))
        self.block = ViTBlock(d, 2, 2 * d)
        self.norm = nn.LayerNorm(d)
        self.attention_pool = nn.Linear(d, 1)
        self.fc = nn.Linear(d, CLASSES)

    def forward(self, x):
        x = self.tokenizer(x).flatten(2).transpose(-2, -1) + self.pos_embed
        x = self.norm(self.block(x))
        x = torch.matmul(F.softmax(self.attention_pool(x), dim=1).transpose(-1, -2), x).squeeze(-2)
        return self.fc(x)


class GNSwap(nn.Module):
    """torchvision's BatchNorm2d swapped for nn.GroupNorm(min(32, C), C), as non-IID studies do: a GroupNorm of one
    channel a group, whose Reshape [N,C,−1] torch writes as for flatten(2)."""
    SHAPE = (3, 16, 16)

    def __init__(self):
        super().__init__()
        def gn(c):
            return nn.GroupNorm(min(32, c), c)
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), gn(8), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), gn(16), nn.ReLU(),
                                      nn.Conv2d(16, 32, 1, bias=False), gn(32), nn.ReLU())
        self.fc = nn.Linear(32, CLASSES)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


class Affine(nn.Module):
    """ResMLP's Affine: alpha · x + beta over the last axis, in place of a LayerNorm (drawn off 1 and 0)."""

    def __init__(self, dim):
        super().__init__()
        self.alpha = nn.Parameter(1 + 0.2 * torch.randn(dim))
        self.beta = nn.Parameter(0.2 * torch.randn(dim))

    def forward(self, x):
        return self.alpha * x + self.beta


class ResMLPTiny(nn.Module):
    """A tiny ResMLP (facebookresearch/deit's resmlp_models.py): Affine instead of LayerNorm, a Linear across the
    patches, layer scales gamma_1 and gamma_2."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=16, patches=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, 4, stride=4)
        self.norm1 = Affine(d)
        self.attn = nn.Linear(patches, patches)
        self.norm2 = Affine(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.gamma_1 = nn.Parameter(0.1 + 0.05 * torch.randn(d))
        self.gamma_2 = nn.Parameter(0.1 + 0.05 * torch.randn(d))
        self.norm = Affine(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = x + self.gamma_1 * self.attn(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        x = x + self.gamma_2 * self.mlp(self.norm2(x))
        return self.head(self.norm(x).mean(1))


class SpatialGatingUnit(nn.Module):
    """gMLP's spatial gating unit: u, v = x.chunk(2, dim=-1); u * proj(norm(v)) along the tokens, proj lucidrains'
    Conv1d over the tokens or timm's Linear of v.transpose(-1, -2)."""

    def __init__(self, d, tokens, conv):
        super().__init__()
        self.norm = nn.LayerNorm(d // 2)
        self.conv = conv
        self.proj = nn.Conv1d(tokens, tokens, 1) if conv else nn.Linear(tokens, tokens)

    def forward(self, x):
        u, v = x.chunk(2, dim=-1)
        v = self.norm(v)
        if self.conv:
            return u * self.proj(v)
        return u * self.proj(v.transpose(-1, -2)).transpose(-1, -2)


class GMLPBlock(nn.Module):
    """gMLP's block: x + fc2(SGU(GELU(fc1(LayerNorm(x)))))."""

    def __init__(self, d, tokens, conv):
        super().__init__()
        self.norm, self.fc1 = nn.LayerNorm(d), nn.Linear(d, 4 * d)
        self.sgu, self.fc2 = SpatialGatingUnit(4 * d, tokens, conv), nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(self.sgu(F.gelu(self.fc1(self.norm(x)))))


class GMLPTiny(nn.Module):
    """A tiny gMLP (two spatial gating blocks, one in lucidrains' spelling and one in timm's) with a SwiGLU MLP."""
    SHAPE = (3, 16, 16)

    def __init__(self, d=16, tokens=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, 4, stride=4)
        self.blocks = nn.Sequential(GMLPBlock(d, tokens, True), GMLPBlock(d, tokens, False))
        self.w1, self.w2, self.w3 = nn.Linear(d, 2 * d), nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = self.blocks(x)
        x = x + self.w3(F.silu(self.w1(x)) * self.w2(x))
        return self.head(x.mean(1))


class SHITokenizer(nn.Module):
    """SHI-Labs/Compact-Transformers' Tokenizer (src/utils/tokenizer.py): n_conv_layers of Conv (no bias), ReLU and
    MaxPool2d(3, 2, 1), the intermediate ones of in_planes 64 channels, then Flatten(2, 3) and transpose(-2, -1)."""

    def __init__(self, kernel_size, n_conv_layers, n_output_channels, in_planes=64):
        super().__init__()
        stride, padding = max(1, kernel_size // 2 - 1), max(1, kernel_size // 2)
        chans = [3] + [in_planes] * (n_conv_layers - 1) + [n_output_channels]
        self.conv_layers = nn.Sequential(*[nn.Sequential(
            nn.Conv2d(chans[i], chans[i + 1], kernel_size, stride=stride, padding=padding, bias=False), nn.ReLU(),
            nn.MaxPool2d(3, 2, 1)) for i in range(n_conv_layers)])
        self.flattener = nn.Flatten(2, 3)

    def forward(self, x):
        return self.flattener(self.conv_layers(x)).transpose(-2, -1)


class SHIAttention(nn.Module):
    """SHI-Labs' Attention (src/utils/transformers.py): qkv without bias, softmax(q·kᵀ·scale)·v, proj."""

    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))


class SHIEncoderLayer(nn.Module):
    """SHI-Labs' TransformerEncoderLayer: src + attn(pre_norm(src)), then norm1 of the sum, then src +
    linear2(gelu(linear1(src))) (its dropouts and drop path are identities in eval mode)."""

    def __init__(self, d_model, nhead, dim_feedforward):
        super().__init__()
        self.pre_norm = nn.LayerNorm(d_model)
        self.self_attn = SHIAttention(d_model, nhead)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.norm1 = nn.LayerNorm(d_model)
        self.linear2 = nn.Linear(dim_feedforward, d_model)

    def forward(self, src):
        src = src + self.self_attn(self.pre_norm(src))
        src = self.norm1(src)
        return src + self.linear2(F.gelu(self.linear1(src)))


class CCTSHI(nn.Module):
    """SHI-Labs' CCT: Tokenizer, then TransformerClassifier with a learnable positional embedding and seq_pool."""
    SHAPE = (3, 16, 16)

    def __init__(self, dim=16, layers=2, heads=2, mlp_ratio=1, kernel_size=3, n_conv_layers=2):
        super().__init__()
        self.tokenizer = SHITokenizer(kernel_size, n_conv_layers, dim)
        self.positional_emb = nn.Parameter(0.2 * torch.randn(1, 16, dim))
        self.blocks = nn.ModuleList([SHIEncoderLayer(dim, heads, dim * mlp_ratio) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.attention_pool = nn.Linear(dim, 1)
        self.fc = nn.Linear(dim, CLASSES)

    def forward(self, x):
        x = self.tokenizer(x) + self.positional_emb
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        x = torch.matmul(F.softmax(self.attention_pool(x), dim=1).transpose(-1, -2), x).squeeze(-2)
        return self.fc(x)


class CosineHead(nn.Module):
    """A cosine classifier: F.normalize of the features before a bias-free Linear, scaled by 10."""
    SHAPE = (3, 16, 16)

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.proj = nn.Linear(32, 24)
        self.fc = nn.Linear(24, CLASSES, bias=False)

    def forward(self, x):
        h = F.relu(self.c2(F.max_pool2d(F.relu(self.c1(x)), 2))).mean((2, 3))
        return 10 * self.fc(F.normalize(self.proj(h), dim=1))


class LRNCNN(nn.Module):
    """The TensorFlow tutorial's CIFAR-10 CNN with its local response normalisations, narrowed."""
    SHAPE = (3, 16, 16)

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 5, padding=2)
        self.c2 = nn.Conv2d(8, 8, 5, padding=2)
        self.lrn1 = nn.LocalResponseNorm(4, alpha=1e-2, beta=0.75, k=1.0)
        self.lrn2 = nn.LocalResponseNorm(5, alpha=0.1, beta=0.75, k=2.0)
        self.fc = nn.Linear(8 * 4 * 4, CLASSES)

    def forward(self, x):
        x = self.lrn1(F.max_pool2d(F.relu(self.c1(x)), 3, 2, padding=1))
        x = F.max_pool2d(self.lrn2(F.relu(self.c2(x))), 3, 2, padding=1)
        return self.fc(torch.flatten(x, 1))


# The fixtures drawn from seeds of their own: name → (network, seed).
SEEDED = {"concat_cnn": (ConcatCNN, 21), "concat_mlp": (ConcatMLP, 22), "normalized_input": (NormalizedInput, 23),
          "silu": (SiLUCNN, 24), "ceil_pool": (CeilPool, 25), "mobilenet_block": (MobileNetBlock, 26),
          "se_head": (SEHead, 27), "activations2": (Activations2, 28),
          "shuffle_block": (ShuffleBlock, 29), "layernorm": (LayerNormNet, 30),
          "factorized_conv": (FactorizedConv, 31), "same_pad": (SamePad, 32), "prelu": (PReLUNet, 35), "global_max": (GlobalMax, 36), "convnext_tv": (ConvNeXtTV, 37), "vit_tiny": (ViTTiny, 38), "mixer_tiny": (MixerTiny, 39), "vit_chunked": (ViTChunked, 40), "vit_encoder": (ViTEncoder, 41), "vit_seqfirst": (ViTSeqFirst, 42),
          "vit_patches": (ViTPatches, 43), "vit_variants": (ViTVariants, 44),
          "poolformer_tiny": (PoolFormerTiny, 45), "fixup_tiny": (FixupTiny, 46),
          "cct_tiny": (CCTTiny, 47), "gn_swap": (GNSwap, 48),
          "resmlp_tiny": (ResMLPTiny, 49), "gmlp_tiny": (GMLPTiny, 50),
          "cct_shi": (CCTSHI, 51), "cosine_head": (CosineHead, 52),
          "lrn_cnn": (LRNCNN, 53),
          "convnext_block": (ConvNeXtTiny, 33)}


def perturb_group_norms(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.GroupNorm, nn.LayerNorm, LayerNormCF)):
                m.weight.copy_(1 + 0.2 * torch.randn_like(m.weight))
                m.bias.copy_(0.2 * torch.randn_like(m.bias))
            if isinstance(m, nn.MultiheadAttention):  # its biases start at 0: torch's export would share them
                m.in_proj_bias.copy_(0.1 * torch.randn_like(m.in_proj_bias))
                m.out_proj.bias.copy_(0.1 * torch.randn_like(m.out_proj.bias))


def shape_of(model):
    return getattr(model, "SHAPE", SHAPE)


def export(name, model, training=False):
    path = os.path.join(HERE, name + ".onnx")
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    model.train(training)
    torch.onnx.export(model, torch.zeros(2, *shape_of(model)), path, opset_version=13, training=mode,
                      do_constant_folding=not training and getattr(model, "FOLD", True), input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
    model.eval()
    import onnx
    onnx.checker.check_model(onnx.load(path))
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print("%s: %d bytes, operators %s" % (path, os.path.getsize(path), ", ".join(ops)))


# The fixtures whose NAME.bin also holds the float64 gradient (rounded to float32, at each tensor's
# grad_f64_offset), the reference the Go test compares with where it is there: in a transformer, sums that
# cancel leave torch's float32 coordinates off by more than the test's 1e-3 (MLP-Mixer's second token-mixing
# bias has a gradient of exactly 0: every LayerNorm after it removes a shift of a whole token; so has PoolFormer's
# first GroupNorm bias: pool(y) − y removes a shift of a whole channel).
GRAD64 = {"vit_tiny", "mixer_tiny", "vit_chunked", "vit_encoder", "vit_seqfirst", "vit_patches", "vit_variants",
          "poolformer_tiny", "cct_tiny", "gn_swap", "resmlp_tiny", "gmlp_tiny", "cct_shi", "cosine_head", "lrn_cnn"}


def gradient_fixture(name, model):
    """NAME.bin: a batch, torch's logits, loss and gradient (see the module's doc)."""
    model.eval()
    torch.manual_seed(11)
    images = torch.randint(0, 256, (BATCH, *shape_of(model)), dtype=torch.uint8)
    labels = torch.randint(0, CLASSES, (BATCH,), dtype=torch.int64)
    x = images.to(torch.float32) * torch.tensor(1.0 / 255, dtype=torch.float32)
    model.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    params = [(n, p.grad.detach().numpy().astype(np.float32)) for n, p in model.named_parameters()]
    m64 = model.double()
    m64.zero_grad()
    loss64 = F.cross_entropy(m64(x.double()), labels)
    loss64.backward()
    norm64 = float(np.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in m64.parameters())))
    grads64 = [p.grad.detach().numpy().astype(np.float32) for _, p in m64.named_parameters()]
    model.float()

    payload = bytearray(images.numpy().tobytes())
    tensors = []
    logits_offset = len(payload)
    payload += logits.detach().numpy().astype("<f4").tobytes()
    for n, g in params:
        tensors.append({"name": n, "shape": list(g.shape), "grad_offset": len(payload), "grad_count": int(g.size),
                        "grad_sumsq": float(np.sum(g.astype(np.float64) ** 2)),
                        "grad_max_abs": float(np.max(np.abs(g)))})
        payload += g.astype("<f4").tobytes()
    if name in GRAD64:
        for t, g in zip(tensors, grads64):
            t["grad_f64_offset"] = len(payload)
            payload += g.astype("<f4").tobytes()
    header = {
        "format": 1, "made_by": "models/testdata/onnx/make_fixtures.py", "onnx_file": name + ".onnx",
        "torch": torch.__version__, "python": sys.version.split()[0], "threads": torch.get_num_threads(),
        "shape": list(shape_of(model)), "classes": CLASSES, "batch": BATCH, "labels": labels.tolist(),
        "images": {"offset": 0, "bytes": images.numel()},
        "input_sha256": hashlib.sha256(x.numpy().astype("<f4").tobytes()).hexdigest(),
        "logits_offset": logits_offset,
        "loss": float(loss.item()), "loss_float64": float(loss64.item()),
        "grad_norm": float(np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for _, g in params))),
        "grad_norm_float64": norm64,
        "tensors": tensors,
    }
    head = json.dumps(header, indent=1).encode()
    path = os.path.join(HERE, name + ".bin")
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<I", len(head)) + head + bytes(payload))
    print("%s: loss %.9g (float64 %.12g), |grad| %.9g (float64 %.12g), %d bytes" %
          (path, header["loss"], header["loss_float64"], header["grad_norm"], norm64, os.path.getsize(path)))


def make_seeded(name):
    """One of the fixtures drawn from a seed of their own, with its NAME.bin."""
    net, seed = SEEDED[name]
    torch.manual_seed(seed)
    model = net()
    perturb_group_norms(model)
    export(name, model)
    gradient_fixture(name, model)


def main(names):
    torch.set_num_threads(1)
    for name in names:
        if name not in SEEDED:
            sys.exit("make_fixtures.py: %s is not made alone (only %s are; the others are made in sequence, "
                     "by the script without arguments)" % (name, ", ".join(SEEDED)))
    if names:
        for name in names:
            make_seeded(name)
        return
    torch.manual_seed(7)
    nets = {"gn_resnet": GNResNet(), "mlp_dropout": MLPDropout(), "pad_cnn": PadCNN()}
    perturb_group_norms(nets["gn_resnet"])
    for name, model in nets.items():
        export(name, model, training=(name == "mlp_dropout"))
        gradient_fixture(name, model)
    export("maxpool_padding", PoolPadding(nn.MaxPool2d(3, 2, padding=1)))
    export("avgpool_padding", PoolPadding(nn.AvgPool2d(3, 2, padding=1)))
    export("batchnorm", WithBatchNorm())
    export("sigmoid", WithSigmoid())
    exclude = PoolPadding(nn.AvgPool2d(3, 2, padding=1, count_include_pad=False))
    export("avgpool_exclude_pad", exclude)
    gradient_fixture("avgpool_exclude_pad", exclude)
    nobias = LinearNoBias()
    export("linear_nobias", nobias)
    gradient_fixture("linear_nobias", nobias)
    example = MNISTExample()
    export("mnist_example", example)
    gradient_fixture("mnist_example", example)
    export("groupnorm_no_affine", GroupNormNoAffine())
    activations = Activations()
    export("activations", activations)
    gradient_fixture("activations", activations)
    for name in SEEDED:
        make_seeded(name)


if __name__ == "__main__":
    main(sys.argv[1:])
