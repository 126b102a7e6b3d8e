// The parameters of word expansion (shell_scan.h; IEEE Std 1003.1-2017,
// Shell Command Language 2.6.2, and bash(1) "Parameter Expansion" and
// "Arrays"): ${...} read into its name, subscript and what follows (${#...}
// a length, ${!...} an indirection or an array's subscripts); the values of
// positional and special parameters, variables and array elements, $@, $*,
// A[@] and A[*] as lists, a subscript expanded and evaluated as arithmetic
// (negative: from the end); a list joined or cut into fields as its quoting
// says. The operators after the name (# % / : ^ , - = + ?) are
// shell_params.cpp's.
#include <cctype>
#include <string>

#include "shell/shell_scan.h"

namespace lostflops::interop::scan {


Scanner::Got Scanner::get(const std::string& name, const std::string& sub) {
    Got g;
    if (name == "@" || name == "*") {
        g.set = true;
        g.multi = true;
        g.star = name == "*";
        g.items = ev_.state.args;
        return g;
    }
    if (sub.empty()) {
        if (std::isdigit(static_cast<unsigned char>(name[0])) && name != "0" &&
            std::stoul(name.substr(0, 6)) > ev_.state.args.size()) {
            g.missing = "the script's argument " + name + " (not given; pass it with --arg)";
            return g;
        }
        const auto v = ev_.lookup(name, true);
        g.set = v.has_value();
        if (v) g.items.push_back(*v);
        return g;
    }
    const auto it = ev_.state.vars.find(name);
    const bool all = sub == "@" || sub == "*";
    if (it == ev_.state.vars.end()) {
        if (!ev_.fixed_names.count(name)) ev_.note_unset(name);
        g.multi = all;
        return g;
    }
    const ShellVar& var = it->second;
    if (!var.unknown.empty()) {
        g.set = true;
        g.items.push_back({"", var.unknown});
        return g;
    }
    if (all) {
        g.set = true;
        g.multi = true;
        g.star = sub == "*";
        ev_.count_copied(ShellEvaluator::var_bytes(var));
        g.items = var.items;
        return g;
    }
    // The subscript is expanded, then evaluated as arithmetic (bash(1) "Arrays").
    const ShellField index = ev_.settle(ev_.expand_one({sub, line_}, ShellEvaluator::Mode::heredoc));
    if (!index.known()) {
        g.set = true;
        g.items.push_back({"", index.unknown});
        return g;
    }
    std::string why;
    auto idx = ev_.arith_value(index.text, line_, why);
    // A negative subscript counts from the end.
    if (idx && *idx < 0) *idx += static_cast<int64_t>(var.items.size());
    if (!idx) {
        g.set = true;
        g.items.push_back({"", why});
    } else if (*idx < 0) {
        g.set = true;
        g.items.push_back({"", "not evaluated: ${" + name + "[" + sub + "]} at " + ev_.where(line_) +
                                   ", a subscript before the first element (bash: bad array subscript)"});
    } else if (static_cast<size_t>(*idx) < var.items.size()) {
        g.set = true;
        ev_.count_copied(var.items[static_cast<size_t>(*idx)].text.size());
        g.items.push_back(var.items[static_cast<size_t>(*idx)]);
    }
    return g;
}

// ${!A[@]}: the subscripts of an indexed array (dense here: a sparse one
// is unknown, shell_vars.cpp), 0 to n - 1.
Scanner::Got Scanner::keys(const std::string& name, const std::string& sub) {
    Got g;
    g.multi = true;
    g.star = sub == "*";
    const auto it = ev_.state.vars.find(name);
    if (it == ev_.state.vars.end()) return g;
    g.set = true;
    if (!it->second.unknown.empty()) {
        g.multi = false;
        g.items.push_back({"", it->second.unknown});
        return g;
    }
    for (size_t k = 0; k < it->second.items.size(); ++k) g.items.push_back({std::to_string(k), ""});
    return g;
}

void Scanner::emit_got(const Got& g, bool dq) {
    if (!g.missing.empty()) {
        b_.value({ev_.placeholder(g.missing, true), g.missing}, dq);
        return;
    }
    if (!g.multi) {
        if (!g.items.empty()) b_.value(g.items[0], dq);
        return;
    }
    if (g.items.empty()) {
        if (dq) b_.empty_list();
        return;
    }
    if (g.star && dq && g.items.size() > 1) {
        if (const std::string why = ev_.ifs_join_not_evaluated(); !why.empty()) {
            b_.value({"", why}, true);
            return;
        }
    }
    if (g.star && dq) {
        ShellValue joined;
        for (size_t k = 0; k < g.items.size(); ++k) {
            joined.text += (k ? " " : "") + g.items[k].text;
            if (joined.unknown.empty()) joined.unknown = g.items[k].unknown;
        }
        b_.value(joined, true);
        return;
    }
    for (size_t k = 0; k < g.items.size(); ++k) {
        if (k) {
            if (dq || ev_.joining()) {
                if (ev_.joining()) b_.value({" ", ""}, true);
                else b_.end_field();
            } else {
                b_.value({" ", ""}, false);
            }
        }
        b_.value(g.items[k], dq);
    }
}

void Scanner::parameter(const std::string& in, bool dq) {
    size_t i = 0;
    bool length = false, indirect = false;
    if (in.size() > 1 && in[0] == '#' && in.find_first_of(":-=+?%/^,", 1) != 1) {
        length = true;
        i = 1;
    } else if (in.size() > 1 && in[0] == '!') {
        indirect = true;
        i = 1;
    }
    std::string name;
    if (i < in.size() && (std::isdigit(static_cast<unsigned char>(in[i])))) {
        while (i < in.size() && std::isdigit(static_cast<unsigned char>(in[i]))) name += in[i++];
    } else if (i < in.size() && std::string("@*#?-$!").find(in[i]) != std::string::npos) {
        name = std::string(1, in[i++]);
    } else {
        while (i < in.size() && (std::isalnum(static_cast<unsigned char>(in[i])) || in[i] == '_')) name += in[i++];
    }
    if (name.empty()) ev_.fail(line_, "bad substitution '${" + in + "}'");
    std::string sub;
    if (i < in.size() && in[i] == '[') {
        const size_t end = match_close(in, i + 1, '[', ']');
        sub = in.substr(i + 1, end - i - 2);
        i = end;
    }
    if (indirect && (sub == "@" || sub == "*")) {
        if (i != in.size()) {
            b_.value({"", "not evaluated: the expansion '${" + in + "}' at " + ev_.where(line_)}, dq);
            return;
        }
        emit_got(keys(name, sub), dq);
        return;
    }
    if (indirect && i < in.size() && (in[i] == '@' || in[i] == '*') && i + 1 == in.size()) {
        b_.value({"", "not evaluated: '${" + in + "}' (the names of variables) at " + ev_.where(line_)}, dq);
        return;
    }
    if (indirect) {
        const auto target = ev_.lookup(name, true);
        if (!target || !target->unknown.empty()) {
            b_.value({"", target ? target->unknown : "an indirect ${!" + name + "} of an unset variable"}, dq);
            return;
        }
        name = target->text;
    }
    Got g = get(name, sub);
    if (length) {
        if (i != in.size()) ev_.fail(line_, "bad substitution '${" + in + "}'");
        ShellValue v;
        if (g.multi) v.text = std::to_string(g.items.size());
        else if (!g.items.empty()) v = {std::to_string(g.items[0].text.size()), g.items[0].unknown};
        else v.text = "0";
        b_.value(v, dq);
        return;
    }
    if (i == in.size()) {
        emit_got(g, dq);
        return;
    }
    operation(in, i, name, g, dq);
}

}  // namespace lostflops::interop::scan
