// A mesh's printed text read back (parse_printed_device_mesh): what to_string prints for named
// and unnamed meshes of one to five dims gives back the same mesh, the short form older rows
// hold still reads, and text that is not such a mesh (or is one no DeviceMesh can be: a
// stride that is not row-major, past the limits parse_device_mesh keeps) is refused.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "engine/sharding/device_mesh.hpp"

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

}  // namespace
}  // namespace pipelens::sharding
