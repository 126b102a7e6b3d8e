// Data files embedded in the binary at build time (cmake/embed.cmake), so that
// the executable (build/lostflops) needs nothing beside it. Names are paths under data/.
#pragma once

#include <optional>
#include <string_view>

namespace lostflops {

std::optional<std::string_view> embedded_file(std::string_view name);

}  // namespace lostflops
