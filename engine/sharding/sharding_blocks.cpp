// The blocks as op lists over named tensors. An op's output i becomes a named tensor with the
// spec its chosen strategy produces, so each later op sees the layout it really gets.
#include "engine/sharding/sharding_blocks.hpp"

#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

struct BlockOp {
    std::string op;
    std::vector<std::string> arguments;  // a tensor's name, or "=VALUE" for a value
    std::string output;
};

struct Block {
    std::map<std::string, DTensorSpec> tensors;
    std::vector<BlockOp> ops;
};

// Which mesh dims play data and tensor parallel.
struct MeshRoles {
    int data = -1;
    int tensor = -1;
};

MeshRoles roles_of(const DeviceMesh& mesh) {
    MeshRoles roles;
    for (int dim = 0; dim < mesh.ndim(); ++dim) {
        if (mesh.dim_names.size() > static_cast<std::size_t>(dim) && mesh.dim_names[dim] == "dp")
            roles.data = dim;
        if (mesh.dim_names.size() > static_cast<std::size_t>(dim) && mesh.dim_names[dim] == "tp")
            roles.tensor = dim;
    }
    if (roles.tensor < 0)
        roles.tensor = mesh.ndim() - 1;
    if (roles.data < 0 && mesh.ndim() > 1)
        roles.data = roles.tensor == 0 ? 1 : 0;
    return roles;
}

DTensorSpec tensor(const DeviceMesh& mesh, std::vector<std::int64_t> shape, std::string dtype,
                   int data_dim, int tensor_dim, const MeshRoles& roles) {
    DTensorSpec spec;
    spec.mesh = mesh;
    spec.tensor = meta_of_shape(std::move(shape), std::move(dtype));
    spec.placements.assign(mesh.ndim(), Placement::replicate());
    if (data_dim >= 0 && roles.data >= 0)
        spec.placements[roles.data] = Placement::shard(data_dim);
    if (tensor_dim >= 0 && roles.tensor >= 0)
        spec.placements[roles.tensor] = Placement::shard(tensor_dim);
    return spec;
}

Block mlp_block(const DeviceMesh& mesh, const MeshRoles& roles, const BlockShape& shape) {
    Block block;
    const std::int64_t tokens = shape.batch * shape.sequence, hidden = shape.hidden;
    block.tensors.emplace("x", tensor(mesh, {tokens, hidden}, shape.dtype, 0, -1, roles));
    block.tensors.emplace("w1", tensor(mesh, {hidden, 4 * hidden}, shape.dtype, -1, 1, roles));
    block.tensors.emplace("w2", tensor(mesh, {4 * hidden, hidden}, shape.dtype, -1, 0, roles));
    block.ops = {{"aten.mm.default", {"x", "w1"}, "h"},
                 {"aten.gelu.default", {"h"}, "a"},
                 {"aten.mm.default", {"a", "w2"}, "y"}};
    return block;
}

Block attention_block(const DeviceMesh& mesh, const MeshRoles& roles, const BlockShape& shape) {
    Block block;
    const std::int64_t tokens = shape.batch * shape.sequence, hidden = shape.hidden;
    const std::int64_t head_dim = hidden / shape.heads;
    block.tensors.emplace("x", tensor(mesh, {tokens, hidden}, shape.dtype, 0, -1, roles));
    for (const char* weight : {"wq", "wk", "wv"})
        block.tensors.emplace(weight, tensor(mesh, {hidden, hidden}, shape.dtype, -1, 1, roles));
    block.tensors.emplace("wo", tensor(mesh, {hidden, hidden}, shape.dtype, -1, 0, roles));
    const std::string heads_shape =
        fmt::format("=[{}, {}, {}, {}]", shape.batch, shape.sequence, shape.heads, head_dim);
    for (const std::string name : {"q", "k", "v"}) {
        block.ops.push_back({"aten.mm.default", {"x", "w" + name}, name});
        block.ops.push_back({"aten.view.default", {name, heads_shape}, name + "4"});
        block.ops.push_back({"aten.transpose.int", {name + "4", "=1", "=2"}, name + "h"});
    }
    block.ops.push_back(
        {"aten._scaled_dot_product_flash_attention.default", {"qh", "kh", "vh"}, "attention"});
    block.ops.push_back({"aten.transpose.int", {"attention", "=1", "=2"}, "o4"});
    block.ops.push_back(
        {"aten.reshape.default", {"o4", fmt::format("=[{}, {}]", tokens, hidden)}, "o"});
    block.ops.push_back({"aten.mm.default", {"o", "wo"}, "y"});
    return block;
}

Block embedding_block(const DeviceMesh& mesh, const MeshRoles& roles, const BlockShape& shape) {
    Block block;
    block.tensors.emplace("ids", tensor(mesh, {shape.batch, shape.sequence}, "i64", 0, -1, roles));
    block.tensors.emplace(
        "table", tensor(mesh, {shape.vocabulary, shape.hidden}, shape.dtype, -1, 0, roles));
    block.tensors.emplace("positions",
                          tensor(mesh, {shape.sequence, shape.hidden}, shape.dtype, -1, -1, roles));
    block.ops = {{"aten.embedding.default", {"table", "ids"}, "e"},
                 {"aten.add.Tensor", {"e", "positions"}, "y"}};
    return block;
}

}  // namespace

std::vector<std::string> block_names() {
    return {"mlp", "attention", "embedding"};
}

std::vector<ShardingDecision> propagate_block(const std::string& name, const DeviceMesh& mesh,
                                              const BlockShape& shape) {
    if (shape.batch < 1 || shape.sequence < 1 || shape.hidden < 1 || shape.heads < 1 ||
        shape.vocabulary < 1 || shape.hidden % shape.heads != 0)
        throw std::invalid_argument(fmt::format(
            "block {}: batch, sequence, hidden, heads and vocabulary must be positive and hidden "
            "({}) divisible by heads ({})",
            name, shape.hidden, shape.heads));
    const MeshRoles roles = roles_of(mesh);
    Block block;
    if (name == "mlp")
        block = mlp_block(mesh, roles, shape);
    else if (name == "attention")
        block = attention_block(mesh, roles, shape);
    else if (name == "embedding")
        block = embedding_block(mesh, roles, shape);
    else
        throw std::invalid_argument(fmt::format("--block {}: unknown block (use {})", name,
                                                fmt::join(block_names(), ", ")));
    std::vector<ShardingDecision> decisions;
    for (const BlockOp& op : block.ops) {
        OpSchema schema;
        schema.op = op.op;
        for (const std::string& argument : op.arguments) {
            if (argument.starts_with("="))
                schema.arguments.emplace_back(OpValue{argument.substr(1)});
            else
                schema.arguments.emplace_back(block.tensors.at(argument));
        }
        ShardingDecision decision = propagate(schema);
        block.tensors.insert_or_assign(op.output, decision.chosen_spec().outputs.at(0).value());
        decisions.push_back(std::move(decision));
    }
    return decisions;
}

}  // namespace pipelens::sharding
