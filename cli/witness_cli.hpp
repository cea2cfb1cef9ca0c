// `cuzk witness build|calc`, and the inputs-to-witness step of `cuzk prove --input`.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace cuzk::cli {

// Adds `witness build`, `witness calc` and `witness bench`; the returned function runs whichever was chosen (nullopt
// when neither was).
std::function<std::optional<int>()> add_witness_subcommands(CLI::App& app);

// Computes the witness of `input` (circuit inputs JSON) with the generator at `generator` (a circom
// --c folder, compiled and cached on first use, or a built artefact) into the .wtns file `out`.
// Returns kOk, or an exit code after printing the reason.
// engine: "program" (the compiled witness program where it can be used) or "native".
int witness_calc(const std::string& generator, const std::string& input, const std::string& out, bool quiet,
                 const std::string& engine = "program");

}  // namespace cuzk::cli
