// DeviceMesh: devices arranged in named dimensions (dp=2, tp=4), row-major, with how many
// devices share a host and the links inside and between hosts (the cost model needs both).
// Printing follows upstream: `DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))`; traces keep that
// text, and parse_printed_device_mesh reads it back.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pipelens::sharding {

// The links a collective runs over. The defaults are upstream's cost-model constants
// (_collective_utils.py MeshTopoInfo: 87.7 GB/s and 0.6 us inside a host, 0.22 x that bandwidth
// and 2.7 us between hosts, 6.6 us per collective); a planner sets them from the cluster's data
// sheet instead.
struct MeshLinks {
    double intra_host_gb_per_s = 87.7;
    double intra_host_latency_us = 0.6;
    double inter_host_gb_per_s = 87.7 * 0.22;
    double inter_host_latency_us = 2.7;
    double collective_latency_us = 6.6;  // per collective, whatever the link

    friend bool operator==(const MeshLinks&, const MeshLinks&) = default;
};

struct DeviceMesh {
    std::vector<std::string> dim_names;  // empty: unnamed dims
    std::vector<int> shape;
    std::string device_type = "cuda";
    int devices_per_host = 8;
    MeshLinks links;

    int ndim() const { return static_cast<int>(shape.size()); }
    int size() const;  // all devices
    int size(int dim) const { return shape.at(dim); }
    std::vector<int> stride() const;  // row-major
    // A device's coordinate (one index per mesh dim).
    std::vector<int> coordinate_of(int device) const;

    friend bool operator==(const DeviceMesh&, const DeviceMesh&) = default;
};

// "DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))"; unnamed "DeviceMesh((4,), 'cuda',
// stride=(1,))".
std::string to_string(const DeviceMesh& mesh);

// Devices per host when none is given: upstream's MeshTopoInfo asks the device type's handle for
// its device count, which is 1 for cpu (so every mesh dim of more than one device crosses
// hosts); pipelens assumes 8 for any other type, a GPU host's usual count.
int default_devices_per_host(std::string_view device_type);

// "tp=4", "dp=2,tp=4" (names and sizes, outermost first). std::invalid_argument naming the
// text for an empty, malformed or non-positive size.
DeviceMesh parse_device_mesh(std::string_view text, std::string device_type = "cuda",
                             int devices_per_host = 8);

// The inverse of to_string, for the text a trace keeps (its sharding rows' mesh):
// "DeviceMesh((dp=2, tp=2), 'cuda', stride=(2, 1))", unnamed "DeviceMesh((4,), 'cuda',
// stride=(1,))". The device type and the stride may be left out ("DeviceMesh((tp=2))"); a
// stride given must be row-major, the only layout a DeviceMesh has. The same limits as
// parse_device_mesh; devices_per_host and the links are not in the text and keep their
// defaults. std::invalid_argument naming the text when it is not such a mesh.
DeviceMesh parse_printed_device_mesh(std::string_view text);

}  // namespace pipelens::sharding
