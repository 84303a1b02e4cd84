// A mesh's printed text read back (parse_printed_device_mesh): what to_string prints for named
// and unnamed meshes of one to five dims gives back the same mesh, the short form older rows
// hold still reads, and text that is not such a mesh (or is one no DeviceMesh can be: a
// stride that is not row-major, past the limits parse_device_mesh keeps) is refused. Then what
// a mesh's devices are and hold: devices per host by device type, whether every device holds
// part of each sharded dim (upstream's is_tensor_shardable), and each device's local shape and
// offset against the examples upstream's docstrings work by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/sharding/device_mesh.hpp"
#include "engine/sharding/sharding_visualize.hpp"

namespace pipelens::sharding {
namespace {

DeviceMesh unnamed(std::vector<int> shape) {
    DeviceMesh mesh;
    mesh.shape = std::move(shape);
    return mesh;
}

TEST(PrintedDeviceMesh, ReadsBackWhatToStringPrints) {
    for (const DeviceMesh& mesh :
         {parse_device_mesh("tp=4"), parse_device_mesh("dp=2,tp=4"),
          parse_device_mesh("dp=2,tp=2,cp=2"), parse_device_mesh("a=1,b=2,c=3,d=1,e=2", "cpu"),
          unnamed({4}), unnamed({2, 4}), unnamed({2, 2, 2})}) {
        SCOPED_TRACE(to_string(mesh));
        EXPECT_EQ(parse_printed_device_mesh(to_string(mesh)), mesh);
    }
}

TEST(PrintedDeviceMesh, AnUnnamedMeshHasItsSizesAndNoNames) {
    const DeviceMesh mesh = parse_printed_device_mesh("DeviceMesh((4,), 'cuda', stride=(1,))");
    EXPECT_EQ(mesh.shape, std::vector<int>{4});
    EXPECT_TRUE(mesh.dim_names.empty());
    EXPECT_EQ(mesh.device_type, "cuda");
    const DeviceMesh cube =
        parse_printed_device_mesh("DeviceMesh((2, 2, 2), 'cpu', stride=(4, 2, 1))");
    EXPECT_EQ(cube.shape, (std::vector<int>{2, 2, 2}));
    EXPECT_TRUE(cube.dim_names.empty());
    EXPECT_EQ(cube.device_type, "cpu");
}

TEST(PrintedDeviceMesh, TheDeviceTypeAndStrideMayBeLeftOut) {
    const DeviceMesh mesh = parse_printed_device_mesh("DeviceMesh((tp=2))");
    EXPECT_EQ(mesh.dim_names, std::vector<std::string>{"tp"});
    EXPECT_EQ(mesh.shape, std::vector<int>{2});
    EXPECT_EQ(mesh.device_type, "cuda");
    const DeviceMesh typed = parse_printed_device_mesh("DeviceMesh((dp=2, tp=3), 'cpu')");
    EXPECT_EQ(typed.dim_names, (std::vector<std::string>{"dp", "tp"}));
    EXPECT_EQ(typed.shape, (std::vector<int>{2, 3}));
    EXPECT_EQ(typed.device_type, "cpu");
}

TEST(PrintedDeviceMesh, RefusesWhatIsNotAPrintedMesh) {
    for (const char* text : {
             "",
             "tp=4",                                               // the command line's form
             "DeviceMesh(())",                                     // no dims
             "DeviceMesh((tp=4), 'cuda', stride=(1,)",             // not closed
             "DeviceMesh((tp=4), 'cuda', stride=(1,)) and more",   // trailing text
             "DeviceMesh((dp=2, 4), 'cuda', stride=(4, 1))",       // named and unnamed
             "DeviceMesh((4, tp=2), 'cuda', stride=(2, 1))",       // unnamed and named
             "DeviceMesh((tp=0), 'cuda', stride=(1,))",            // an empty dim
             "DeviceMesh((tp=-2), 'cuda', stride=(1,))",           // a negative one
             "DeviceMesh((tp=99999999999), 'cuda', stride=(1,))",  // past an int
             "DeviceMesh((tp=x), 'cuda', stride=(1,))",            // not a size
             "DeviceMesh((dp=2, tp=2), 'cuda', stride=(1, 2))",    // column-major
             "DeviceMesh((dp=2, tp=2), 'cuda', stride=(2,))",      // a stride per dim
             "DeviceMesh((tp=4), 'cu da', stride=(1,))",           // not a device type
             "DeviceMesh((tp=4), cuda, stride=(1,))",              // unquoted
             "DeviceMesh((a=1, b=1, c=1, d=1, e=1, f=1))",         // six dims: five at most
             "DeviceMesh((2048, 1024))",                           // 2^21 devices: 2^20 at most
         }) {
        SCOPED_TRACE(text);
        EXPECT_THROW(parse_printed_device_mesh(text), std::invalid_argument);
    }
}

TEST(PrintedDeviceMesh, TheErrorNamesTheTextAndTheForm) {
    try {
        parse_printed_device_mesh("DeviceMesh((tp=4)");
        FAIL() << "no error";
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(),
                     "'DeviceMesh((tp=4)': expected a mesh as printed, e.g. \"DeviceMesh((dp=2, "
                     "tp=4), 'cuda', stride=(4, 1))\" or \"DeviceMesh((4,), 'cuda', "
                     "stride=(1,))\"");
    }
}

// Upstream's MeshTopoInfo counts a host's devices with the device type's handle: 1 for cpu.
TEST(MeshDevices, ACpuHostHoldsOneDevice) {
    EXPECT_EQ(default_devices_per_host("cpu"), 1);
    EXPECT_EQ(default_devices_per_host("cuda"), 8);
    EXPECT_EQ(default_devices_per_host("xpu"), 8);
}

std::string unshardable(const char* tensor, const char* mesh) {
    const DTensorSpec spec = parse_tensor_spec(tensor, parse_device_mesh(mesh));
    EXPECT_EQ(is_shardable(spec.tensor.shape, spec),
              why_unshardable(spec.tensor.shape, spec) == "");
    return why_unshardable(spec.tensor.shape, spec);
}

// is_tensor_shardable: a _S(d, f) needs f times the shards counted up to its mesh dim, as each
// of its f pieces is split again (3 rows as _S(0, 2) on 2 devices leave one device a row short).
TEST(MeshDevices, AStridedShardNeedsItsSplitFactorTimesTheShards) {
    EXPECT_EQ(unshardable("f32[3](_S(0, 2))", "tp=2"),
              "dim 0 has 3 elements; _S(0, 2) on mesh dim 0 needs at least 4 (2 shards x split "
              "factor 2)");
    EXPECT_EQ(unshardable("f32[4](_S(0, 2))", "tp=2"), "");
    EXPECT_EQ(unshardable("f32[4,8](_S(0, 2)S(0))", "dp=2,tp=2"), "");
    EXPECT_EQ(unshardable("f32[3,8](_S(0, 2)S(0))", "dp=2,tp=2"),
              "dim 0 has 3 elements for 4 shards");
    EXPECT_EQ(unshardable("f32[6](S(0)_S(0, 2))", "dp=2,tp=2"),
              "dim 0 has 6 elements; _S(0, 2) on mesh dim 1 needs at least 8 (4 shards x split "
              "factor 2)");
    EXPECT_EQ(unshardable("f32[6](S(0)S(0))", "dp=2,tp=2"), "");
    EXPECT_EQ(unshardable("f32[1,6](RS(0))", "dp=2,tp=2"), "dim 0 has 1 elements for 2 shards");
}

std::vector<std::vector<std::int64_t>> shapes_and_offsets(const char* tensor, const char* mesh) {
    const DeviceMesh device_mesh = parse_device_mesh(mesh);
    const DTensorSpec spec = parse_tensor_spec(tensor, device_mesh);
    std::vector<std::vector<std::int64_t>> result;
    for (int device = 0; device < device_mesh.size(); ++device) {
        const LocalShard shard = local_shard(spec, device_mesh.coordinate_of(device));
        result.push_back(shard.shape);
        result.push_back(shard.offset);
    }
    return result;
}

// compute_local_shape_and_global_offset's docstring: [2, 5] as S(1)S(1) on 2 x 2 gives local
// shapes (2, 2), (2, 1), (2, 1), (2, 1) at offsets (0, 0), (0, 2), (0, 3), (0, 4): dim 1 is
// chunked 3 + 2 on mesh dim 0, then each piece again on mesh dim 1.
TEST(LocalShards, UnevenNestedShardsAreChunkedOneMeshDimAtATime) {
    EXPECT_EQ(shapes_and_offsets("f32[2,5](S(1)S(1))", "dp=2,tp=2"),
              (std::vector<std::vector<std::int64_t>>{
                  {2, 2}, {0, 0}, {2, 1}, {0, 2}, {2, 1}, {0, 3}, {2, 1}, {0, 4}}));
    // Eight rows over 2 x 4 as S(0)S(0): one row each, in device order.
    EXPECT_EQ(shapes_and_offsets("f32[8,4](S(0)S(0))", "a=2,b=4")[11],
              (std::vector<std::int64_t>{5, 0}));
    // Two rows over four devices: the last two hold none, at offset 2 (the dim's size).
    EXPECT_EQ(shapes_and_offsets("f32[2](S(0))", "tp=4"),
              (std::vector<std::vector<std::int64_t>>{{1}, {0}, {1}, {1}, {0}, {2}, {0}, {2}}));
}

// _StridedShard's docstring: [0..8] as _S(0, 2) on 4 devices splits [0-4] and [5-8] four ways
// each, so the devices hold [0, 1, 5], [2, 3, 6], [4, 7] and [8]; its class docstring: [8, 8]
// as _S(0, 2)S(0) on 2 x 2 puts rows 0-1, 4-5, 2-3, 6-7 on devices 0 to 3.
TEST(LocalShards, AStridedShardTakesItsPieceOfEachSplit) {
    const DeviceMesh four = parse_device_mesh("tp=4");
    const DTensorSpec nine = parse_tensor_spec("f32[9](_S(0, 2))", four);
    const std::vector<std::vector<IndexRun>> held{
        {{0, 2}, {5, 6}}, {{2, 4}, {6, 7}}, {{4, 5}, {7, 8}}, {{8, 9}}};
    for (int device = 0; device < 4; ++device)
        EXPECT_EQ(held_indices(nine, four.coordinate_of(device), 0), held[device]) << device;
    EXPECT_EQ(shapes_and_offsets("f32[9](_S(0, 2))", "tp=4"),
              (std::vector<std::vector<std::int64_t>>{{3}, {0}, {3}, {2}, {2}, {4}, {1}, {8}}));
    EXPECT_EQ(shapes_and_offsets("f32[8,8](_S(0, 2)S(0))", "dp=2,tp=2"),
              (std::vector<std::vector<std::int64_t>>{
                  {2, 8}, {0, 0}, {2, 8}, {4, 0}, {2, 8}, {2, 0}, {2, 8}, {6, 0}}));
    // A huge dim costs no more than a small one; a part scattered into many runs is refused.
    const DeviceMesh two = parse_device_mesh("tp=2");
    EXPECT_EQ(held_indices(parse_tensor_spec("f32[1099511627776](_S(0, 2))", two), {1}, 0),
              (std::vector<IndexRun>{{274877906944, 549755813888}, {824633720832, 1099511627776}}));
    EXPECT_THROW(held_indices(parse_tensor_spec("f32[64](_S(0, 32))", two), {0}, 0),
                 std::invalid_argument);
}

}  // namespace
}  // namespace pipelens::sharding
