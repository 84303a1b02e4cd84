// Built-in models. Layers are closures over module holders created here; parameters are
// initialised from the spec's seed through a generator of our own, so every process gets the
// same values whatever else consumed the global generator before.
#include "engine/runtime/model_library.hpp"

#include <torch/script.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace pipelens::runtime {
namespace {

// The stand-in for ReLU on this thread, if a stage backend installed one. Thread-local like
// PyTorch's own dispatch modes: ranks run as threads, each stage's backend affects only the
// forward its own thread is running.
thread_local const ReluReplacement* active_relu_replacement = nullptr;

// Deterministic parameter values: a fresh CPU generator per model.
torch::Tensor seeded(const std::vector<std::int64_t>& shape, torch::Generator& generator,
                     double scale) {
    return torch::randn(shape, generator, torch::kFloat32) * scale;
}

void reinitialise(torch::nn::Module& module, torch::Generator& generator) {
    torch::NoGradGuard no_grad;
    for (auto& parameter : module.parameters()) {
        const double fan_in = parameter.dim() > 1 ? static_cast<double>(parameter.size(1)) : 1.0;
        parameter.copy_(seeded(parameter.sizes().vec(), generator, 1.0 / std::sqrt(fan_in)));
    }
}

// Batches of [batch, hidden] inputs and targets, from a generator of their own so the data do
// not depend on what else drew random numbers.
auto vector_batches(int hidden) {
    return [hidden](int batch, std::uint64_t seed) {
        auto generator = torch::make_generator<torch::CPUGeneratorImpl>(seed + 1000);
        TensorList inputs{torch::randn({batch, hidden}, generator, torch::kFloat32)};
        return std::make_pair(inputs, torch::randn({batch, hidden}, generator, torch::kFloat32));
    };
}

PipelineModel mlp_model(const ModelSpec& spec, int layer_count, torch::Generator& generator) {
    PipelineModel model;
    model.input_names = {"x"};
    for (int index = 0; index < layer_count; ++index) {
        auto block =
            std::make_shared<torch::nn::Sequential>(torch::nn::Linear(spec.hidden, spec.hidden),
                                                    torch::nn::Linear(spec.hidden, spec.hidden));
        reinitialise(**block, generator);
        model.owners.push_back(block);
        model.layers.push_back(
            {"layers." + std::to_string(index),
             [block](const TensorList& in) -> TensorList {
                 auto& layers = **block;
                 const torch::Tensor hidden =
                     layers.ptr<torch::nn::LinearImpl>(0)->forward(in.at(0));
                 return {layers.ptr<torch::nn::LinearImpl>(1)->forward(model_relu(hidden))};
             },
             (*block)->parameters()});
    }
    const int hidden = spec.hidden;
    model.make_batch = vector_batches(hidden);
    return model;
}

// ExampleCode, repeated: even layers end a first half (matmul, ReLU, a constant clone, Linear)
// and hand over (x, constant, skip); odd layers consume them.
PipelineModel example_model(const ModelSpec& spec, int layer_count, torch::Generator& generator) {
    PipelineModel model;
    model.input_names = {"x"};
    const int hidden = spec.hidden;
    for (int index = 0; index < layer_count; ++index) {
        auto weight = std::make_shared<torch::Tensor>(
            seeded({hidden, hidden}, generator, 1.0 / std::sqrt(hidden)).requires_grad_());
        auto linear = std::make_shared<torch::nn::Linear>(hidden, hidden);
        reinitialise(**linear, generator);
        auto constant = std::make_shared<torch::Tensor>(seeded({hidden}, generator, 1.0));
        model.owners.insert(model.owners.end(), {weight, linear, constant});
        model.buffers.push_back(*constant);
        std::vector<torch::Tensor> parameters{*weight};
        for (const auto& parameter : (*linear)->parameters())
            parameters.push_back(parameter);
        std::function<TensorList(const TensorList&)> forward;
        if (index % 2 == 0) {
            forward = [weight, linear, constant](const TensorList& in) -> TensorList {
                const torch::Tensor skip = in.at(0);
                torch::Tensor x = model_relu(torch::mm(skip, *weight));
                torch::Tensor carried = constant->clone();  // crosses the boundary without grad
                x = (*linear)->forward(x);
                return {x, carried, skip};
            };
        } else {
            forward = [weight, linear](const TensorList& in) -> TensorList {
                torch::Tensor x = model_relu(in.at(0)) + in.at(1);
                x = torch::mm(x, *weight);
                x = (*linear)->forward(x) + in.at(2);  // the skip connection
                return {model_relu(x)};
            };
        }
        model.layers.push_back({"layers." + std::to_string(index), forward, parameters});
    }
    model.make_batch = vector_batches(hidden);
    return model;
}

// ModelWithKwargs: layer 0 takes x and the keyword input y.
PipelineModel kwargs_model(const ModelSpec& spec, int layer_count, torch::Generator& generator) {
    PipelineModel model = mlp_model(spec, layer_count, generator);
    model.input_names = {"x", "y"};
    const int hidden = spec.hidden;
    auto weight = std::make_shared<torch::Tensor>(
        seeded({hidden, hidden}, generator, 1.0 / std::sqrt(hidden)).requires_grad_());
    model.owners.push_back(weight);
    ModelLayer& first = model.layers.front();
    auto block = first.forward;
    first.forward = [weight, block](const TensorList& in) -> TensorList {
        return block({torch::mm(in.at(0), *weight) + in.at(1)});
    };
    first.parameters.insert(first.parameters.begin(), *weight);
    model.make_batch = [hidden](int batch, std::uint64_t seed) {
        auto generator = torch::make_generator<torch::CPUGeneratorImpl>(seed + 1000);
        torch::Tensor x = torch::randn({batch, hidden}, generator, torch::kFloat32);
        torch::Tensor y = torch::randn({batch, hidden}, generator, torch::kFloat32);
        return std::make_pair(TensorList{x, y},
                              torch::randn({batch, hidden}, generator, torch::kFloat32));
    };
    return model;
}

struct TransformerBlock : torch::nn::Module {
    TransformerBlock(int hidden, int heads)
        : heads(heads),
          norm1(register_module("norm1",
                                torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
          qkv(register_module("qkv", torch::nn::Linear(hidden, 3 * hidden))),
          projection(register_module("projection", torch::nn::Linear(hidden, hidden))),
          norm2(register_module("norm2",
                                torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
          up(register_module("up", torch::nn::Linear(hidden, 4 * hidden))),
          down(register_module("down", torch::nn::Linear(4 * hidden, hidden))) {}

    torch::Tensor forward(const torch::Tensor& x) {
        const auto batch = x.size(0), length = x.size(1), hidden = x.size(2);
        const auto head_size = hidden / heads;
        auto split_heads = [&](const torch::Tensor& t) {
            return t.view({batch, length, heads, head_size}).transpose(1, 2);
        };
        const auto parts = qkv->forward(norm1->forward(x)).chunk(3, -1);
        const torch::Tensor scores =
            torch::matmul(split_heads(parts[0]), split_heads(parts[1]).transpose(-2, -1)) /
            std::sqrt(static_cast<double>(head_size));
        const torch::Tensor attended =
            torch::matmul(torch::softmax(scores, -1), split_heads(parts[2]))
                .transpose(1, 2)
                .reshape({batch, length, hidden});
        const torch::Tensor h = x + projection->forward(attended);
        return h + down->forward(torch::gelu(up->forward(norm2->forward(h))));
    }

    std::int64_t heads;
    torch::nn::LayerNorm norm1;
    torch::nn::Linear qkv, projection;
    torch::nn::LayerNorm norm2;
    torch::nn::Linear up, down;
};

PipelineModel transformer_model(const ModelSpec& spec, int layer_count,
                                torch::Generator& generator) {
    if (spec.heads <= 0 || spec.hidden % spec.heads != 0)
        throw std::invalid_argument("model transformer: hidden (" + std::to_string(spec.hidden) +
                                    ") must be a multiple of heads (" + std::to_string(spec.heads) +
                                    ")");
    PipelineModel model;
    model.input_names = {"x"};
    for (int index = 0; index < layer_count; ++index) {
        auto block = std::make_shared<TransformerBlock>(spec.hidden, spec.heads);
        reinitialise(*block, generator);
        model.owners.push_back(block);
        model.layers.push_back(
            {"blocks." + std::to_string(index),
             [block](const TensorList& in) -> TensorList { return {block->forward(in.at(0))}; },
             block->parameters()});
    }
    const int hidden = spec.hidden, sequence = spec.sequence;
    model.make_batch = [hidden, sequence](int batch, std::uint64_t seed) {
        auto generator = torch::make_generator<torch::CPUGeneratorImpl>(seed + 1000);
        TensorList inputs{torch::randn({batch, sequence, hidden}, generator, torch::kFloat32)};
        return std::make_pair(inputs,
                              torch::randn({batch, sequence, hidden}, generator, torch::kFloat32));
    };
    return model;
}

// A TorchScript file: its top-level children, in order, are the layers.
PipelineModel torchscript_model(const ModelSpec& spec) {
    auto module = std::make_shared<torch::jit::Module>();
    try {
        *module = torch::jit::load(spec.name);
    } catch (const c10::Error& error) {
        throw std::invalid_argument("model " + spec.name + ": cannot load the TorchScript file: " +
                                    error.what_without_backtrace());
    }
    PipelineModel model;
    model.input_names = {"x"};
    model.owners.push_back(module);
    for (const auto& child : module->named_children()) {
        auto submodule = std::make_shared<torch::jit::Module>(child.value);
        model.owners.push_back(submodule);
        std::vector<torch::Tensor> parameters;
        for (const auto& parameter : submodule->parameters())
            parameters.push_back(parameter);
        for (const auto& buffer : submodule->buffers())
            model.buffers.push_back(buffer);
        model.layers.push_back({child.name,
                                [submodule](const TensorList& in) -> TensorList {
                                    std::vector<torch::jit::IValue> arguments(in.begin(), in.end());
                                    return {submodule->forward(arguments).toTensor()};
                                },
                                parameters});
    }
    if (model.layers.empty())
        throw std::invalid_argument("model " + spec.name + ": the module has no children to split");
    if (spec.input_shape.empty())
        throw std::invalid_argument("model " + spec.name +
                                    ": a TorchScript model needs the shape of one sample "
                                    "(--input-shape, e.g. 64 or 16,64)");
    const std::vector<std::int64_t> sample = spec.input_shape;
    std::vector<ModelLayer> layers = model.layers;
    model.make_batch = [sample, layers](int batch, std::uint64_t seed) {
        auto generator = torch::make_generator<torch::CPUGeneratorImpl>(seed + 1000);
        std::vector<std::int64_t> shape{batch};
        shape.insert(shape.end(), sample.begin(), sample.end());
        TensorList inputs{torch::randn(shape, generator, torch::kFloat32)};
        torch::NoGradGuard no_grad;
        const auto output_shape = run_layers(layers, inputs).at(0).sizes().vec();
        return std::make_pair(inputs, torch::randn(output_shape, generator, torch::kFloat32));
    };
    return model;
}

}  // namespace

// Tied weights: layer 0 projects with W, the last layer with W transposed (an embedding reused
// as the output projection), MLP blocks in between. W is used by the first and the last stage.
PipelineModel tied_model(const ModelSpec& spec, int layer_count, torch::Generator& generator) {
    if (layer_count < 2)
        throw std::invalid_argument("model tied: needs at least 2 layers");
    PipelineModel model = mlp_model(spec, layer_count - 2, generator);
    const int hidden = spec.hidden;
    auto weight = std::make_shared<torch::Tensor>(
        seeded({hidden, hidden}, generator, 1.0 / std::sqrt(hidden)).requires_grad_());
    model.owners.push_back(weight);
    model.layers.insert(model.layers.begin(),
                        {"embed",
                         [weight](const TensorList& in) -> TensorList {
                             return {model_relu(torch::mm(in.at(0), *weight))};
                         },
                         {*weight}});
    model.layers.push_back({"project",
                            [weight](const TensorList& in) -> TensorList {
                                return {torch::mm(in.at(0), weight->t())};
                            },
                            {*weight}});
    return model;
}

// Layers that only scale by one scalar parameter (1 at first): stages cost next to nothing but
// still have a gradient to compute, so a step measures the runtime's own overhead per action
// (scheduling, slots, transport, timing, autograd bookkeeping).
PipelineModel empty_model(const ModelSpec& spec, int layer_count) {
    PipelineModel model;
    model.input_names = {"x"};
    for (int index = 0; index < layer_count; ++index) {
        auto scale = std::make_shared<torch::Tensor>(torch::ones({1}).requires_grad_());
        model.owners.push_back(scale);
        model.layers.push_back(
            {"layers." + std::to_string(index),
             [scale](const TensorList& in) -> TensorList { return {in.at(0) * *scale}; },
             {*scale}});
    }
    const int hidden = spec.hidden;
    model.make_batch = vector_batches(hidden);
    return model;
}

PipelineModel build_model(const ModelSpec& spec, int stage_count) {
    const int layer_count = spec.layers;
    if (layer_count < stage_count)
        throw std::invalid_argument("model " + spec.name + ": " + std::to_string(layer_count) +
                                    " layers cannot fill " + std::to_string(stage_count) +
                                    " stages");
    torch::Generator generator = torch::make_generator<torch::CPUGeneratorImpl>(spec.seed);
    PipelineModel model;
    if (spec.name == "mlp")
        model = mlp_model(spec, layer_count, generator);
    else if (spec.name == "example")
        model = example_model(spec, layer_count, generator);
    else if (spec.name == "kwargs")
        model = kwargs_model(spec, layer_count, generator);
    else if (spec.name == "transformer")
        model = transformer_model(spec, layer_count, generator);
    else if (spec.name == "empty")
        model = empty_model(spec, layer_count);
    else if (spec.name == "tied")
        model = tied_model(spec, layer_count, generator);
    else if (std::filesystem::path(spec.name).extension() == ".pt")
        model = torchscript_model(spec);
    else
        throw std::invalid_argument("unknown model '" + spec.name +
                                    "' (built-in: mlp, example, kwargs, transformer, tied, "
                                    "empty; or a TorchScript .pt file)");
    model.name = spec.name;
    return model;
}

torch::Tensor model_relu(const torch::Tensor& input) {
    if (active_relu_replacement != nullptr)
        return (*active_relu_replacement)(input);
    return torch::relu(input);
}

ScopedReluReplacement::ScopedReluReplacement(const ReluReplacement* replacement)
    : previous_(active_relu_replacement) {
    active_relu_replacement = replacement;
}

ScopedReluReplacement::~ScopedReluReplacement() {
    active_relu_replacement = previous_;
}

TensorList run_layers(const std::vector<ModelLayer>& layers, TensorList values) {
    for (const ModelLayer& layer : layers)
        values = layer.forward(values);
    return values;
}

torch::Tensor model_loss(const torch::Tensor& output, const torch::Tensor& target) {
    const auto reduced = [](const torch::Tensor& tensor) {
        return tensor.scalar_type() == torch::kBFloat16 || tensor.scalar_type() == torch::kHalf;
    };
    if (!reduced(output) && !reduced(target))
        return torch::mse_loss(output, target);
    return torch::mse_loss(output.to(torch::kFloat), target.to(torch::kFloat));
}

}  // namespace pipelens::runtime
