// Writes a TorchScript MLP whose last layer is heavier than the others (an output head), for
// the real-run check of `pipelens partition` (scripts/partition_real_check.sh): split evenly,
// the stage holding the head is the pipeline's bottleneck.
//
//   pipelens_write_uneven_mlp OUT.pt LAYERS HIDDEN HEAD_FACTOR
//
// Layers 0 .. LAYERS-2 are relu(x W1) W2 with W1, W2 of HIDDEN x HIDDEN; the last is the same
// through HEAD_FACTOR x HIDDEN columns, so it costs HEAD_FACTOR blocks. Weights are seeded
// (fixed seed) and scaled by 1/sqrt(fan-in), so every run of one file trains the same model.
// Run with `pipelens run --model OUT.pt --input-shape HIDDEN`; children are named layer0, ....
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include <torch/script.h>
#include <torch/torch.h>

namespace {

torch::jit::Module block(int index, int hidden, int width, torch::Generator& generator) {
    torch::jit::Module layer("Block" + std::to_string(index));
    const auto weight = [&](int rows, int columns) {
        return (torch::randn({rows, columns}, generator, torch::kFloat32) / std::sqrt(rows))
            .requires_grad_();
    };
    layer.register_parameter("w1", weight(hidden, width), false);
    layer.register_parameter("w2", weight(width, hidden), false);
    layer.define(
        "def forward(self, x):\n"
        "    return torch.matmul(torch.relu(torch.matmul(x, self.w1)), self.w2)\n");
    return layer;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::cerr << "usage: pipelens_write_uneven_mlp OUT.pt LAYERS HIDDEN HEAD_FACTOR\n";
        return 2;
    }
    const int layers = std::atoi(argv[2]), hidden = std::atoi(argv[3]),
              head_factor = std::atoi(argv[4]);
    if (layers < 2 || hidden < 1 || head_factor < 1) {
        std::cerr << "pipelens_write_uneven_mlp: LAYERS >= 2, HIDDEN >= 1, HEAD_FACTOR >= 1\n";
        return 2;
    }
    auto generator = torch::make_generator<torch::CPUGeneratorImpl>(11);
    torch::jit::Module root("UnevenMlp");
    for (int index = 0; index < layers; ++index) {
        const int width = index + 1 == layers ? head_factor * hidden : hidden;
        root.register_module("layer" + std::to_string(index),
                             block(index, hidden, width, generator));
    }
    root.save(argv[1]);
    return 0;
}
