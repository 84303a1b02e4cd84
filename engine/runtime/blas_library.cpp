// The BLAS look-up of blas_library.hpp: where the process's global scope binds sgemm_, which is
// where LibTorch's own calls to it bind.
#include "engine/runtime/blas_library.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace pipelens::runtime {

std::optional<std::string> reference_blas_in_use() {
    void* const sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
    Dl_info info{};
    if (sgemm == nullptr || dladdr(sgemm, &info) == 0 || info.dli_fname == nullptr)
        return std::nullopt;
    // Through the alternatives' links to the file itself: /usr/lib/<triplet>/blas/libblas.so.3.x
    std::error_code error;
    const std::filesystem::path file = std::filesystem::canonical(info.dli_fname, error);
    if (error || file.parent_path().filename() != "blas" ||
        !file.filename().string().starts_with("libblas.so"))
        return std::nullopt;
    return file.string();
}

std::optional<std::string> reference_blas_note() {
    const std::optional<std::string> file = reference_blas_in_use();
    if (!file)
        return std::nullopt;
    return fmt::format(
        "LibTorch's matrix products run on the reference BLAS ({}), many times slower than an "
        "optimised one, and this run's times are its: install libopenblas0-openmp (Debian, as "
        "`make` does) or point the libblas.so.3 alternative at another optimised BLAS",
        *file);
}

}  // namespace pipelens::runtime
