//! The network: a fully convolutional residual tower with a policy head (one
//! logit per cell) and a win/draw/loss value head. Global pooling over the
//! board's real cells lets one network serve every board size, square or not.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use tch::nn;
use tch::{Device, Kind, Tensor};

use crate::nn::batch::{BatchOutput, EncodedBatch};
use crate::nn::features::INPUT_PLANES;
pub use crate::nn::network_file::{NetConfig, NetError};
use crate::nn::precision::Precision;

/// Index of the "on the board" plane in the input (see `features`).
pub(crate) const BOARD_PLANE: i64 = 5;
/// Index of the "legal move" plane in the input.
pub(crate) const LEGAL_PLANE: i64 = 3;

/// libtorch errors carry a C++ stack trace after the first line.
fn first_line(e: tch::TchError) -> String {
    e.to_string()
        .lines()
        .next()
        .unwrap_or("unknown libtorch error")
        .to_string()
}

fn conv(path: nn::Path, inputs: i64, outputs: i64, kernel: i64, bias: bool) -> nn::Conv2D {
    let config = nn::ConvConfig {
        padding: kernel / 2,
        bias,
        ..Default::default()
    };
    nn::conv2d(path, inputs, outputs, kernel, config)
}

fn batch_norm(path: nn::Path, channels: i64) -> nn::BatchNorm {
    nn::batch_norm2d(path, channels, Default::default())
}

#[derive(Debug)]
struct ResidualBlock {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    conv2: nn::Conv2D,
    bn2: nn::BatchNorm,
}

impl ResidualBlock {
    fn new(path: &nn::Path, channels: i64) -> ResidualBlock {
        ResidualBlock {
            conv1: conv(path / "conv1", channels, channels, 3, false),
            bn1: batch_norm(path / "bn1", channels),
            conv2: conv(path / "conv2", channels, channels, 3, false),
            bn2: batch_norm(path / "bn2", channels),
        }
    }

    fn forward(&self, x: &Tensor, train: bool, compute: Kind) -> Tensor {
        let y = conv_in(&self.conv1, x, compute)
            .apply_t(&self.bn1, train)
            .relu();
        let y = conv_in(&self.conv2, &y, compute).apply_t(&self.bn2, train);
        (y + x).relu()
    }
}

/// A convolution computed in `compute` (the kind of `x`): the fp32 master
/// weights are cast on the way in, so gradients reach them in fp32. This is
/// what PyTorch's CPU autocast does for convolutions; tch exposes autocast
/// for CUDA only.
fn conv_in(conv: &nn::Conv2D, x: &Tensor, compute: Kind) -> Tensor {
    if compute == Kind::Float {
        return x.apply(conv);
    }
    // Every convolution of the tower is stride 1, "same" padding (see `conv`).
    let padding = conv.ws.size()[2] / 2;
    x.conv2d(
        &conv.ws.to_kind(compute),
        conv.bs.as_ref().map(|b| b.to_kind(compute)).as_ref(),
        [1, 1],
        [padding, padding],
        [1, 1],
        1,
    )
}

/// A linear layer computed in `compute` (the kind of `x`), as [`conv_in`].
fn linear_in(linear: &nn::Linear, x: &Tensor, compute: Kind) -> Tensor {
    if compute == Kind::Float {
        return x.apply(linear);
    }
    x.linear(
        &linear.ws.to_kind(compute),
        linear.bs.as_ref().map(|b| b.to_kind(compute)).as_ref(),
    )
}

#[derive(Debug)]
struct ResNet {
    stem: nn::Conv2D,
    stem_bn: nn::BatchNorm,
    blocks: Vec<ResidualBlock>,
    policy_conv: nn::Conv2D,
    policy_bn: nn::BatchNorm,
    policy_out: nn::Conv2D,
    value_conv: nn::Conv2D,
    value_bn: nn::BatchNorm,
    value_hidden: nn::Linear,
    value_out: nn::Linear,
}

impl ResNet {
    fn new(root: &nn::Path, config: NetConfig) -> ResNet {
        let c = config.channels;
        ResNet {
            stem: conv(root / "stem", INPUT_PLANES as i64, c, 3, false),
            stem_bn: batch_norm(root / "stem_bn", c),
            blocks: (0..config.blocks)
                .map(|i| ResidualBlock::new(&(root / "blocks" / i), c))
                .collect(),
            policy_conv: conv(root / "policy_conv", c, c, 1, false),
            policy_bn: batch_norm(root / "policy_bn", c),
            policy_out: conv(root / "policy_out", c, 1, 1, true),
            value_conv: conv(root / "value_conv", c, c, 1, false),
            value_bn: batch_norm(root / "value_bn", c),
            value_hidden: nn::linear(root / "value_hidden", c, c, Default::default()),
            value_out: nn::linear(root / "value_out", c, 3, Default::default()),
        }
    }

    /// `input`: [N, INPUT_PLANES, H, W] -> (policy logits [N, H*W] with
    /// illegal cells at -1e9, WDL logits [N, 3]), both fp32. `compute` is the
    /// kind the convolutions and linear layers run in (Float, or BFloat16 for
    /// mixed-precision training, where batch norms keep fp32 parameters and
    /// statistics on bf16 activations as under PyTorch's autocast).
    fn forward(&self, input: &Tensor, train: bool, compute: Kind) -> (Tensor, Tensor) {
        // Channels-last (NHWC strides), the layout oneDNN's convolutions
        // want; tch has no memory-format API.
        let x = input
            .to_kind(compute)
            .permute([0, 2, 3, 1])
            .contiguous()
            .permute([0, 3, 1, 2]);
        let mut x = conv_in(&self.stem, &x, compute)
            .apply_t(&self.stem_bn, train)
            .relu();
        for block in &self.blocks {
            x = block.forward(&x, train, compute);
        }
        let legal = input.narrow(1, LEGAL_PLANE, 1).flatten(1, -1);
        let p = conv_in(&self.policy_conv, &x, compute)
            .apply_t(&self.policy_bn, train)
            .relu();
        let policy = conv_in(&self.policy_out, &p, compute)
            .flatten(1, -1)
            .to_kind(Kind::Float)
            .masked_fill(&legal.eq(0.0), -1e9);

        // Mean over the board's real cells only (padding excluded).
        let on_board = input.narrow(1, BOARD_PLANE, 1);
        let cells = on_board
            .sum_dim_intlist([2i64, 3].as_slice(), false, Kind::Float)
            .clamp_min(1.0);
        let v = conv_in(&self.value_conv, &x, compute)
            .apply_t(&self.value_bn, train)
            .relu()
            * on_board.to_kind(compute);
        // Summed in fp32 whatever the precision, then back to the compute kind.
        let pooled =
            (v.sum_dim_intlist([2i64, 3].as_slice(), false, Kind::Float) / cells).to_kind(compute);
        let hidden = linear_in(&self.value_hidden, &pooled, compute).relu();
        let wdl = linear_in(&self.value_out, &hidden, compute).to_kind(Kind::Float);
        (policy, wdl)
    }
}

/// A network with its weights on a device.
pub struct Network {
    vs: nn::VarStore,
    net: ResNet,
    config: NetConfig,
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Network({}, {:?})", self.config, self.vs.device())
    }
}

impl Network {
    /// A network with fresh random weights.
    pub fn new(config: NetConfig, device: Device) -> Network {
        let vs = nn::VarStore::new(device);
        let net = ResNet::new(&vs.root(), config);
        Network { vs, net, config }
    }

    /// Loads a network from a safetensors file, reading its size from the
    /// tensors. The file is read and checked once, by the native backend's
    /// reader: every tensor of the architecture present with its exact shape
    /// in f32 (or f16, bf16: read as f32), no other, every weight finite and
    /// no negative variance
    /// (libtorch's own loader accepts extra tensors, broadcastable shapes and
    /// other float types without a word, and a NaN weight would make every
    /// output NaN, which the search would take for uniform priors). Its
    /// limits also keep a hostile file from making libtorch allocate a
    /// network of any size it names.
    pub fn load(path: &Path, device: Device) -> Result<Network, NetError> {
        let weights = crate::nn::native::Weights::read(path)?;
        Network::from_weights(&weights, device).map_err(|why| NetError::new(path, why))
    }

    /// A network holding `weights`.
    pub fn from_weights(
        weights: &crate::nn::native::Weights,
        device: Device,
    ) -> Result<Network, String> {
        let network = Network::new(weights.config, device);
        tch::no_grad(|| -> Result<(), String> {
            for (name, mut var) in network.vs.variables() {
                let values = Tensor::from_slice(weights.get(&name))
                    .f_reshape(var.size())
                    .map_err(|e| format!("{name}: {}", first_line(e)))?;
                var.f_copy_(&values)
                    .map_err(|e| format!("{name}: {}", first_line(e)))?;
            }
            Ok(())
        })?;
        Ok(network)
    }

    /// A copy of the network with the same weights, on the same device.
    pub fn duplicate(&self) -> Network {
        let copy = Network::new(self.config, self.device());
        let source = self.vs.variables();
        tch::no_grad(|| {
            for (name, mut var) in copy.vs.variables() {
                if let Some(value) = source.get(&name) {
                    var.copy_(value);
                }
            }
        });
        copy
    }

    /// The network for inference in `precision`, with every batch norm
    /// folded into the convolution before it (computed in fp32 from the
    /// current weights, then converted).
    pub fn freeze(&self, precision: Precision) -> Frozen {
        tch::no_grad(|| Frozen::new(&self.net, self.config, precision))
    }

    /// Saves the weights as safetensors: written beside the file, then
    /// renamed over it, so that a match or a run reading a checkpoint while
    /// training writes it never finds it half written.
    /// Weights that are not all finite are refused: loading would refuse
    /// them anyway, and a file kept from before is worth more.
    pub fn save(&self, path: &Path) -> Result<(), NetError> {
        if let Some(name) = self.first_non_finite() {
            return Err(NetError::new(
                path,
                format!("not saved: {name} holds NaN or infinite values (the training diverged)"),
            ));
        }
        crate::nn::network_file::write_whole(path, "cannot save", |partial| {
            self.vs.save(partial).map_err(first_line)
        })
    }

    /// The first variable (by name) with a NaN or infinite value.
    fn first_non_finite(&self) -> Option<String> {
        let mut variables = self.vs.variables().into_iter().collect::<Vec<_>>();
        variables.sort_by(|a, b| a.0.cmp(&b.0));
        tch::no_grad(|| {
            variables
                .into_iter()
                .find(|(_, t)| {
                    let finite = t
                        .f_isfinite()
                        .and_then(|f| f.f_all())
                        .and_then(|all| all.f_int64_value(&[]));
                    t.is_floating_point() && !matches!(finite, Ok(1))
                })
                .map(|(name, _)| name)
        })
    }

    pub fn config(&self) -> NetConfig {
        self.config
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// The variables, for an optimiser.
    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    /// Number of trainable parameters.
    pub fn parameter_count(&self) -> i64 {
        self.vs
            .trainable_variables()
            .iter()
            .map(|t| t.numel() as i64)
            .sum()
    }

    /// `input`: [N, INPUT_PLANES, H, W] on the network's device. Returns
    /// policy logits [N, H*W] (illegal cells at -1e9) and WDL logits [N, 3].
    /// `train` selects batch statistics (and their update) over running ones.
    pub fn forward(&self, input: &Tensor, train: bool) -> (Tensor, Tensor) {
        self.net.forward(input, train, Kind::Float)
    }

    /// [`Network::forward`] with the convolutions and linear layers computed
    /// in `compute` (mixed-precision training: Kind::BFloat16, on CPUs with
    /// bf16 hardware and on CUDA); the outputs are fp32.
    pub fn forward_in(&self, input: &Tensor, train: bool, compute: Kind) -> (Tensor, Tensor) {
        self.net.forward(input, train, compute)
    }

    /// Forward pass for inference (no gradients): probabilities. The
    /// evaluation service uses [`Network::freeze`], which is faster.
    pub fn evaluate(&self, input: &Tensor) -> (Tensor, Tensor) {
        tch::no_grad(|| {
            let (policy, wdl) = self.forward(input, false);
            (
                policy.softmax(-1, Kind::Float),
                wdl.softmax(-1, Kind::Float),
            )
        })
    }

    /// Tensor names and shapes, for tools and tests.
    pub fn shapes(&self) -> BTreeMap<String, Vec<i64>> {
        self.vs
            .variables()
            .into_iter()
            .map(|(k, v)| (k, v.size()))
            .collect()
    }
}

/// A convolution with its batch norm folded in: `conv(x) * scale + shift`
/// as one convolution with a bias.
#[derive(Debug)]
struct FoldedConv {
    weight: Tensor,
    bias: Tensor,
    padding: i64,
}

impl FoldedConv {
    fn new(conv: &nn::Conv2D, bn: &nn::BatchNorm, kind: Kind) -> FoldedConv {
        let eps = nn::BatchNormConfig::default().eps;
        let gamma = bn
            .ws
            .as_ref()
            .map_or_else(|| bn.running_var.ones_like(), |w| w.shallow_clone());
        let beta = bn
            .bs
            .as_ref()
            .map_or_else(|| bn.running_mean.zeros_like(), |b| b.shallow_clone());
        let scale = gamma / (&bn.running_var + eps).sqrt();
        let weight = &conv.ws * scale.view([-1, 1, 1, 1]);
        let bias = beta - &bn.running_mean * &scale;
        FoldedConv {
            weight: weight.to_kind(kind),
            bias: bias.to_kind(kind),
            padding: conv.ws.size()[2] / 2,
        }
    }

    /// A convolution that has its own bias and no batch norm.
    fn plain(conv: &nn::Conv2D, kind: Kind) -> FoldedConv {
        let bias = conv.bs.as_ref().map_or_else(
            || Tensor::zeros([conv.ws.size()[0]], (Kind::Float, conv.ws.device())),
            |b| b.shallow_clone(),
        );
        FoldedConv {
            weight: conv.ws.to_kind(kind),
            bias: bias.to_kind(kind),
            padding: conv.ws.size()[2] / 2,
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.conv2d(
            &self.weight,
            Some(&self.bias),
            [1, 1],
            [self.padding, self.padding],
            [1, 1],
            1,
        )
    }
}

/// The network prepared for inference: batch norms folded into the
/// convolutions (a third fewer passes over the activations), weights in
/// the chosen precision. Made by [`Network::freeze`]; not trainable.
#[derive(Debug)]
pub struct Frozen {
    stem: FoldedConv,
    blocks: Vec<[FoldedConv; 2]>,
    policy_conv: FoldedConv,
    policy_out: FoldedConv,
    value_conv: FoldedConv,
    value_hidden: (Tensor, Tensor),
    value_out: (Tensor, Tensor),
    config: NetConfig,
    precision: Precision,
    device: Device,
}

impl Frozen {
    fn new(net: &ResNet, config: NetConfig, precision: Precision) -> Frozen {
        let kind = precision.kind();
        let linear = |l: &nn::Linear| {
            let bias = l.bs.as_ref().map_or_else(
                || Tensor::zeros([l.ws.size()[0]], (Kind::Float, l.ws.device())),
                |b| b.shallow_clone(),
            );
            (l.ws.to_kind(kind), bias.to_kind(kind))
        };
        Frozen {
            stem: FoldedConv::new(&net.stem, &net.stem_bn, kind),
            blocks: net
                .blocks
                .iter()
                .map(|b| {
                    [
                        FoldedConv::new(&b.conv1, &b.bn1, kind),
                        FoldedConv::new(&b.conv2, &b.bn2, kind),
                    ]
                })
                .collect(),
            policy_conv: FoldedConv::new(&net.policy_conv, &net.policy_bn, kind),
            policy_out: FoldedConv::plain(&net.policy_out, kind),
            value_conv: FoldedConv::new(&net.value_conv, &net.value_bn, kind),
            value_hidden: linear(&net.value_hidden),
            value_out: linear(&net.value_out),
            config,
            precision,
            device: net.stem.ws.device(),
        }
    }

    pub fn config(&self) -> NetConfig {
        self.config
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    pub fn device(&self) -> Device {
        self.device
    }

    /// Forward pass: fp32 probabilities (policy [N, H*W], zero on illegal
    /// cells; WDL [N, 3]) whatever the precision. `input` is fp32 and is
    /// converted; in bf16 it is also laid out channels-last, which oneDNN's
    /// bf16 kernels want (tch has no memory-format API: a contiguous NHWC
    /// tensor viewed as NCHW is it).
    pub fn evaluate(&self, input: &Tensor) -> (Tensor, Tensor) {
        tch::no_grad(|| {
            let x = match self.precision {
                Precision::Fp32 | Precision::Int16 => input.shallow_clone(),
                Precision::Bf16 => input
                    .to_kind(Kind::BFloat16)
                    .permute([0, 2, 3, 1])
                    .contiguous()
                    .permute([0, 3, 1, 2]),
                Precision::Half => input.to_kind(Kind::Half),
            };
            let mut h = self.stem.forward(&x).relu();
            for [conv1, conv2] in &self.blocks {
                let y = conv1.forward(&h).relu();
                h = (conv2.forward(&y) + &h).relu();
            }
            let legal = input.narrow(1, LEGAL_PLANE, 1).flatten(1, -1);
            let policy = self
                .policy_out
                .forward(&self.policy_conv.forward(&h).relu())
                .flatten(1, -1)
                .to_kind(Kind::Float)
                .masked_fill(&legal.eq(0.0), -1e9)
                .softmax(-1, Kind::Float);
            let on_board = x.narrow(1, BOARD_PLANE, 1);
            let cells = input
                .narrow(1, BOARD_PLANE, 1)
                .sum_dim_intlist([2i64, 3].as_slice(), false, Kind::Float)
                .clamp_min(1.0);
            let v = self.value_conv.forward(&h).relu() * &on_board;
            // Pooled in fp32 whatever the precision, then back.
            let pooled = (v.sum_dim_intlist([2i64, 3].as_slice(), false, Kind::Float) / cells)
                .to_kind(v.kind());
            let (w1, b1) = &self.value_hidden;
            let (w2, b2) = &self.value_out;
            let wdl = pooled
                .linear(w1, Some(b1))
                .relu()
                .linear(w2, Some(b2))
                .softmax(-1, Kind::Float);
            (policy, wdl)
        })
    }
}

impl crate::nn::backend::BatchEvaluator for Frozen {
    fn evaluate(&mut self, batch: EncodedBatch<'_>) -> BatchOutput {
        let x = Tensor::from_slice(batch.planes())
            .view([
                batch.positions() as i64,
                INPUT_PLANES as i64,
                batch.height() as i64,
                batch.width() as i64,
            ])
            .to_device(self.device);
        let (policy, wdl) = Frozen::evaluate(self, &x);
        let to_vec = |t: Tensor| {
            Vec::<f32>::try_from(t.to_device(Device::Cpu).flatten(0, -1).contiguous())
                .unwrap_or_default()
        };
        BatchOutput {
            policy: to_vec(policy),
            wdl: to_vec(wdl),
        }
    }
}
