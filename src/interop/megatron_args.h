// Megatron's command line read as its argparse parser reads it
// (megatron/training/arguments.py: ArgumentParser(allow_abbrev=False)):
// `--flag value` and `--flag=value`; a flag given twice keeps its last value;
// a value may not start with '-' unless it is a negative number; nargs '+'
// flags take every value up to the next flag. Flags that do not change the
// cost, that change it without being modelled, that need the layer-stack
// model, and flags lostflops does not know become notes (with "did you mean"
// for the last); the values of the flags lostflops reads are kept, with why
// a value is unknown when the script could not say (shell_eval.h).
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "shell/shell_eval.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

class MegatronArgs {
public:
    // Throws InputError(source, "--flag", ...) for a flag that needs a value
    // and has none, or a value given to a flag that takes none.
    MegatronArgs(const std::vector<ShellField>& words, std::string source, std::vector<ImportNote>& notes);

    bool has(const char* name) const { return read_.count(name) != 0; }
    // Any known flag given, read or not.
    bool given(const char* name) const { return given_.count(name) != 0; }
    // The value of a read flag; throws InputError "cannot evaluate" when the
    // script could not say what it is.
    std::optional<std::string> str(const char* name) const;
    // The value when the script says what it is (a path may not), else nullopt.
    std::optional<std::string> known_str(const char* name) const;
    std::optional<int> num(const char* name) const;
    // Every value of a read nargs '+' flag (empty when not given); throws as str().
    std::vector<std::string> strs(const char* name) const;
    int required(const char* name) const;
    // The value, checked against the choices argparse allows.
    std::string choice(const char* name, std::initializer_list<const char*> allowed) const;
    int line(const char* name) const;
    const std::string& source() const { return source_; }

private:
    struct Given {
        std::vector<ShellField> values;
        int line = 0;
    };
    std::map<std::string, Given> read_;
    std::set<std::string> given_;
    std::string source_;
};

}  // namespace lostflops::interop
