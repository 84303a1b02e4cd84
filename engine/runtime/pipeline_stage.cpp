// Stage execution on LibTorch autograd, with the backward split as PyTorch's
// stage_backward_input/stage_backward_weight split it. Before I, the stage's backward graph is
// walked once (no tensor work): the nodes from which a stage input is reachable are the input
// gradients' path, the nodes I runs; a node on that path with an edge leaving it towards
// parameters only (a Linear's addmm, a LayerNorm's backward) is a weight node. I is one engine
// pass that returns the input gradients and captures the gradient arriving at every weight node
// (no extra work: those nodes run in I anyway). W then runs the weight nodes from their
// captured gradients, restricted to the parameters: the engine executes only nodes that lead
// to the requested parameters, so W computes weight gradients and never walks the input path
// again, and I + W costs about what B costs.
//
// W is one engine call from every weight node at once. Left as it is, such a call would also
// walk from a later weight node down the input path to an earlier one's parameters and count
// them twice, so W first cuts each weight node's edges that continue down the input path: I has
// run them, W is the graph's last use, and what stays below each node leads to its own
// parameters only. (One call per node would be exact without the cut, but each call pays the
// engine's set-up and, on a GPU, a hand-over to its device thread: the host-bound stages' W
// cost more than their whole B.) That is exact only while every parameter hangs below exactly
// one weight node. When a parameter is fed by two nodes on the input path (a weight tied within
// the stage, a parameter used twice), or by none (a stage output computed from parameters
// alone), or when no stage input needs a gradient (the first stage: I has nothing to compute),
// W falls back to one backward from the stage's roots over all parameters, which walks the
// input path a second time but is exact.
// Layers and backends are opaque to this: the split works on the recorded graph, so a layer that
// fuses or scripts its ops is split wherever its graph has weight nodes.
//
// Memory: between I and W a microbatch holds, besides its graph, the captured gradients (about
// one activation gradient per weight node), as PyTorch's split does.
#include "engine/runtime/pipeline_stage.hpp"

#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>

#include "engine/runtime/torch_meta.hpp"

namespace pipelens::runtime {

namespace {

using torch::autograd::Edge;
using torch::autograd::edge_list;
using torch::autograd::Node;
using NodeSet = std::unordered_set<const Node*>;

torch::autograd::Engine& engine() {
    return torch::autograd::Engine::get_default_engine();
}

// The accumulator a leaf's gradient goes to; null when no recorded graph uses the leaf.
std::shared_ptr<Node> accumulator_of(const torch::Tensor& leaf) {
    return leaf.requires_grad() ? torch::autograd::impl::try_get_grad_accumulator(leaf) : nullptr;
}

edge_list edges_of(const TensorList& roots) {
    edge_list edges;
    for (const torch::Tensor& root : roots)
        edges.push_back(torch::autograd::impl::gradient_edge(root));
    return edges;
}

// Every node reachable from `roots`, children before parents, with whether one of `targets` is
// reachable from it (itself included). Iterative: a deep stage's graph would overflow the stack
// of a recursive walk.
struct Reach {
    std::vector<Node*> order;
    std::unordered_map<const Node*, bool> reaches;
};

Reach reach_from(const edge_list& roots, const NodeSet& targets) {
    Reach reach;
    std::vector<std::pair<Node*, std::uint32_t>> stack;  // a node and its next edge to visit
    const auto visit = [&](Node* node) {
        if (node != nullptr && reach.reaches.emplace(node, targets.count(node) > 0).second)
            stack.emplace_back(node, 0);
    };
    for (const Edge& root : roots)
        visit(root.function.get());
    while (!stack.empty()) {
        Node* node = stack.back().first;
        const std::uint32_t next = stack.back().second;
        if (next < node->num_outputs()) {
            ++stack.back().second;
            visit(node->next_edge(next).function.get());
            continue;
        }
        stack.pop_back();
        bool reaches = reach.reaches.at(node);
        for (const Edge& edge : node->next_edges())
            reaches = reaches || (edge.is_valid() && reach.reaches.at(edge.function.get()));
        reach.reaches[node] = reaches;
        reach.order.push_back(node);
    }
    return reach;
}

// The parameters' accumulators reached from `start`, a node off the input gradients' path (so
// is everything below it).
void parameters_below(Node* start, const NodeSet& parameters, NodeSet& seen,
                      std::vector<const Node*>& found) {
    std::vector<Node*> stack;
    if (seen.insert(start).second)
        stack.push_back(start);
    while (!stack.empty()) {
        Node* node = stack.back();
        stack.pop_back();
        if (parameters.count(node) > 0)
            found.push_back(node);
        for (const Edge& edge : node->next_edges())
            if (edge.is_valid() && seen.insert(edge.function.get()).second)
                stack.push_back(edge.function.get());
    }
}

struct WeightNode {
    std::shared_ptr<Node> node;
    edge_list parameters;
    std::vector<std::uint32_t> input_path_edges;
};

// The weight nodes of the graph below `roots` (see the comment atop), or nothing when some
// parameter the graph reaches does not hang below exactly one of them.
std::optional<std::vector<WeightNode>> weight_nodes_of(
    const edge_list& roots, const NodeSet& inputs,
    const std::unordered_map<const Node*, std::shared_ptr<Node>>& parameters) {
    NodeSet parameter_nodes;
    for (const auto& entry : parameters)
        parameter_nodes.insert(entry.first);
    const Reach reach = reach_from(roots, inputs);
    std::unordered_map<const Node*, int> feeding_nodes;
    std::vector<WeightNode> weight_nodes;
    for (Node* node : reach.order) {
        if (!reach.reaches.at(node))
            continue;
        NodeSet seen;
        std::vector<const Node*> found;
        std::vector<std::uint32_t> input_path_edges;
        for (std::uint32_t index = 0; index < node->num_outputs(); ++index) {
            const Edge& edge = node->next_edge(index);
            if (!edge.is_valid())
                continue;
            if (reach.reaches.at(edge.function.get()))
                input_path_edges.push_back(index);
            else
                parameters_below(edge.function.get(), parameter_nodes, seen, found);
        }
        if (found.empty())
            continue;
        WeightNode weight_node{node->shared_from_this(), {}, std::move(input_path_edges)};
        for (const Node* parameter : found) {
            ++feeding_nodes[parameter];
            weight_node.parameters.emplace_back(parameters.at(parameter), 0);
        }
        weight_nodes.push_back(std::move(weight_node));
    }
    for (const Node* parameter : parameter_nodes)
        if (reach.reaches.count(parameter) > 0 && feeding_nodes[parameter] != 1)
            return std::nullopt;
    return weight_nodes;
}

// Zeros shaped like the stage's inputs: enough to trace its layers once.
TensorList example_inputs(const StageMeta& meta, const c10::Device& device) {
    TensorList inputs;
    for (const TensorMeta& input : meta.inputs)
        inputs.push_back(empty_like_meta(input, device).zero_());
    return inputs;
}

}  // namespace

PipelineStage::PipelineStage(int index, int stage_count, int microbatch_count,
                             std::vector<ModelLayer> layers, StageMeta meta,
                             const std::string& backend, bool keep_outputs,
                             const c10::Device& device)
    : index_(index),
      stage_count_(stage_count),
      microbatch_count_(microbatch_count),
      layers_(std::move(layers)),
      meta_(std::move(meta)),
      keep_outputs_(keep_outputs),
      backend_(backend, index, layers_, example_inputs(meta_, device)) {}

PipelineStage::MicrobatchState& PipelineStage::state(int microbatch, const char* action) {
    const auto found = states_.find(microbatch);
    if (found == states_.end())
        throw std::logic_error(fmt::format("stage {} runs {} of microbatch {} before its forward",
                                           index_, action, microbatch));
    return found->second;
}

TensorList PipelineStage::forward(int microbatch, const TensorList& inputs,
                                  const torch::Tensor& target, const OutputHook& on_outputs) {
    MicrobatchState state;
    for (std::size_t index = 0; index < inputs.size(); ++index) {
        const bool wants_grad = index < meta_.inputs.size() && meta_.inputs[index].requires_grad;
        state.inputs.push_back(inputs[index].detach().requires_grad_(wants_grad));
    }
    if (backend_.checks())
        backend_.check(fmt::format("stage {} inputs", index_), microbatch, meta_.inputs,
                       state.inputs);
    state.outputs = backend_.run(layers_, state.inputs);
    if (backend_.checks())
        backend_.check(fmt::format("stage {} outputs", index_), microbatch, meta_.outputs,
                       state.outputs);
    if (on_outputs)
        state.outputs = on_outputs(std::move(state.outputs));
    if (keep_outputs_) {
        TensorList kept;
        for (const torch::Tensor& output : state.outputs)
            kept.push_back(output.detach().clone());
        kept_outputs_[microbatch] = std::move(kept);
    }
    TensorList sent;
    if (is_last()) {
        state.final_output = state.outputs.at(0);
        state.loss = model_loss(state.final_output, target);
        if (backend_.checks())
            backend_.check_finite(fmt::format("stage {} loss", index_), microbatch, {state.loss});
        // A copy: the detached loss alone kept about an activation's bytes per microbatch alive
        // until the step ended (measured: the last rank's peak grew by 32 KiB per microbatch).
        losses_[microbatch] = state.loss.detach().clone();
        final_outputs_[microbatch] = state.final_output.detach();
    } else {
        for (const torch::Tensor& output : state.outputs)
            sent.push_back(output.detach());
    }
    states_[microbatch] = std::move(state);
    return sent;
}

void PipelineStage::set_roots(MicrobatchState& state, const TensorList& output_gradients) const {
    state.roots.clear();
    state.root_grads.clear();
    if (is_last()) {
        state.roots.push_back(state.loss / static_cast<double>(microbatch_count_));
        state.root_grads.push_back(torch::ones_like(state.loss));
        return;
    }
    for (std::size_t index = 0; index < state.outputs.size(); ++index) {
        if (!state.outputs[index].requires_grad())
            continue;
        if (index >= output_gradients.size() || !output_gradients[index].defined())
            throw std::runtime_error(fmt::format(
                "stage {}: no gradient arrived for output {}, which requires one", index_, index));
        state.roots.push_back(state.outputs[index]);
        state.root_grads.push_back(output_gradients[index]);
    }
}

TensorList PipelineStage::input_gradients_of(const MicrobatchState& state) const {
    TensorList gradients;
    for (const torch::Tensor& input : state.inputs)
        gradients.push_back(input.requires_grad() && input.grad().defined() ? input.grad()
                                                                            : torch::Tensor());
    return gradients;
}

TensorList PipelineStage::backward_input(int microbatch, const TensorList& output_gradients) {
    MicrobatchState& current = state(microbatch, "I");
    set_roots(current, output_gradients);
    current.weight_parts_captured = false;
    current.weight_parts.clear();
    TensorList gradients(current.inputs.size());
    edge_list wanted;
    std::vector<std::size_t> wanted_inputs;
    NodeSet input_nodes;
    for (std::size_t index = 0; index < current.inputs.size(); ++index)
        if (std::shared_ptr<Node> accumulator = accumulator_of(current.inputs[index])) {
            input_nodes.insert(accumulator.get());
            wanted.emplace_back(std::move(accumulator), 0);
            wanted_inputs.push_back(index);
        }
    if (wanted.empty() || current.roots.empty())
        return gradients;
    const edge_list roots = edges_of(current.roots);
    const std::optional<std::vector<WeightNode>> weight_nodes =
        weight_nodes_of(roots, input_nodes, parameter_accumulators());
    edge_list outputs = wanted;
    if (weight_nodes)
        for (const WeightNode& weight_node : *weight_nodes)
            for (std::uint32_t input = 0; input < weight_node.node->num_inputs(); ++input)
                outputs.emplace_back(weight_node.node, input);
    const TensorList computed = engine().execute(roots, current.root_grads, /*keep_graph=*/true,
                                                 /*create_graph=*/false,
                                                 /*accumulate_grad=*/false, outputs);
    std::size_t next = 0;
    for (const std::size_t index : wanted_inputs)
        gradients[index] = computed[next++];
    if (weight_nodes) {
        for (const WeightNode& weight_node : *weight_nodes) {
            WeightPart part;
            for (std::uint32_t input = 0; input < weight_node.node->num_inputs(); ++input)
                if (const torch::Tensor& gradient = computed[next++]; gradient.defined()) {
                    part.inputs.emplace_back(weight_node.node, input);
                    part.gradients.push_back(gradient);
                }
            part.parameters = weight_node.parameters;
            part.input_path_edges = weight_node.input_path_edges;
            if (!part.inputs.empty())
                current.weight_parts.push_back(std::move(part));
        }
        current.weight_parts_captured = true;
    }
    if (backend_.checks())
        backend_.check_finite(fmt::format("stage {} input gradients", index_), microbatch,
                              gradients);
    return gradients;
}

bool PipelineStage::splits_weight_backward(int microbatch) const {
    const auto found = states_.find(microbatch);
    return found != states_.end() && found->second.weight_parts_captured;
}

void PipelineStage::backward_weight(int microbatch) {
    MicrobatchState& current = state(microbatch, "W");
    if (current.weight_parts_captured) {
        // Every node at once, each cut off from the input path (see the comment atop).
        edge_list roots;
        TensorList gradients;
        edge_list weights;
        for (const WeightPart& part : current.weight_parts) {
            Node& node = *part.inputs.front().function;
            for (const std::uint32_t index : part.input_path_edges)
                node.next_edges()[index] = Edge();
            roots.insert(roots.end(), part.inputs.begin(), part.inputs.end());
            gradients.insert(gradients.end(), part.gradients.begin(), part.gradients.end());
            weights.insert(weights.end(), part.parameters.begin(), part.parameters.end());
        }
        if (!roots.empty())
            engine().execute(roots, gradients, /*keep_graph=*/false, /*create_graph=*/false,
                             /*accumulate_grad=*/true, weights);
    } else {
        const std::vector<torch::Tensor> weights = parameters();
        if (!current.roots.empty() && !weights.empty())
            torch::autograd::backward(current.roots, current.root_grads, /*retain_graph=*/false,
                                      /*create_graph=*/false, weights);
    }
    states_.erase(microbatch);
}

TensorList PipelineStage::full_backward(int microbatch, const TensorList& output_gradients) {
    MicrobatchState& current = state(microbatch, "B");
    set_roots(current, output_gradients);
    if (!current.roots.empty())
        torch::autograd::backward(current.roots, current.root_grads);
    TensorList gradients = input_gradients_of(current);
    if (backend_.checks())
        backend_.check_finite(fmt::format("stage {} input gradients", index_), microbatch,
                              gradients);
    states_.erase(microbatch);
    return gradients;
}

void PipelineStage::reset() {
    for (torch::Tensor& parameter : parameters())
        if (parameter.grad().defined())
            parameter.mutable_grad().reset();
    states_.clear();
    losses_.clear();
    final_outputs_.clear();
    kept_outputs_.clear();
}

const TensorList& PipelineStage::kept_outputs(int microbatch) const {
    const auto found = kept_outputs_.find(microbatch);
    if (found == kept_outputs_.end())
        throw std::logic_error(
            fmt::format("stage {} kept no outputs of microbatch {} (built without keep_outputs?)",
                        index_, microbatch));
    return found->second;
}

double PipelineStage::loss(int microbatch) const {
    return losses_.at(microbatch).item<double>();
}

const torch::Tensor& PipelineStage::output(int microbatch) const {
    return final_outputs_.at(microbatch);
}

std::unordered_map<const Node*, std::shared_ptr<Node>> PipelineStage::parameter_accumulators()
    const {
    std::unordered_map<const Node*, std::shared_ptr<Node>> accumulators;
    for (const ModelLayer& layer : layers_)
        for (const torch::Tensor& parameter : layer.parameters)
            if (std::shared_ptr<Node> accumulator = accumulator_of(parameter))
                accumulators.emplace(accumulator.get(), std::move(accumulator));
    return accumulators;
}

std::vector<torch::Tensor> PipelineStage::parameters() const {
    std::vector<torch::Tensor> all;
    for (const ModelLayer& layer : layers_)
        all.insert(all.end(), layer.parameters.begin(), layer.parameters.end());
    return all;
}

}  // namespace pipelens::runtime
