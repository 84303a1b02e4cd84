// The parameter count `pipelens run` checks against memory before building anything
// (stage_plan/model_size.hpp) against the parameters of every built-in model as the runtime
// builds it: the two describe the same layers, or the check refuses the wrong runs.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/runtime/model_library.hpp"
#include "engine/stage_plan/model_size.hpp"

namespace pipelens::runtime {
namespace {

// Each parameter once: the tied model's projection is listed by two layers.
double built_parameter_count(const PipelineModel& model) {
    std::set<const void*> seen;
    double count = 0;
    for (const ModelLayer& layer : model.layers)
        for (const torch::Tensor& parameter : layer.parameters)
            if (seen.insert(parameter.data_ptr()).second)
                count += static_cast<double>(parameter.numel());
    return count;
}

TEST(ModelSize, EveryBuiltInModelHoldsTheParametersTheCheckCounts) {
    for (const std::string name : {"mlp", "example", "kwargs", "transformer", "tied", "empty"}) {
        for (const int layers : {2, 5}) {
            ModelSpec spec;
            spec.name = name;
            spec.layers = layers;
            spec.hidden = 12;
            const PipelineModel model = build_model(spec, 2);
            EXPECT_EQ(builtin_parameter_count(name, layers, 12), built_parameter_count(model))
                << name << " with " << layers << " layers";
        }
    }
}

TEST(ModelSize, ATorchScriptFileHasNoCountBeforeItIsLoaded) {
    EXPECT_FALSE(builtin_parameter_count("model.pt", 4, 64).has_value());
}

TEST(ModelSize, SizesBeyondInt64DoNotOverflow) {
    // hidden 2^31 - 1: a transformer block alone is about 5.5e19 parameters.
    EXPECT_GT(*builtin_parameter_count("transformer", 1, 2147483647.0), 5.5e19);
}

}  // namespace
}  // namespace pipelens::runtime
