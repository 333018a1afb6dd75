// gpubook-emu-worker: runs CUDA kernels compiled for the CPU, on behalf of the Rust host
// (crates/gpubook-emu/src/worker.rs). The protocol is in crates/gpubook-emu/DESIGN.md:
// one command per line on stdin, one JSON reply per command on fd 3, kernel printf on stdout.
#include "arena.h"
#include "json.h"
#include "launch.h"
#include "modules.h"
#include "signals.h"
#include "access/unwritten.h"
#include "watchdog.h"
#include "worker.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gpubook::rt;

namespace {

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') i++;
        size_t j = i;
        while (j < line.size() && line[j] != ' ') j++;
        if (j > i) words.push_back(line.substr(i, j - i));
        i = j;
    }
    return words;
}

// The text after the first `skip` words (a path may contain spaces).
std::string rest(const std::string& line, int skip) {
    size_t i = 0;
    for (int k = 0; k < skip; k++) {
        while (i < line.size() && line[i] == ' ') i++;
        while (i < line.size() && line[i] != ' ') i++;
    }
    while (i < line.size() && line[i] == ' ') i++;
    return line.substr(i);
}

bool parse_u64(const std::string& s, int base, uint64_t* out) {
    if (s.empty()) return false;
    char* end = nullptr;
    *out = std::strtoull(s.c_str(), &end, base);
    return *end == 0;
}

bool parse_hex_bytes(const std::string& s, std::vector<uint8_t>* out) {
    if (s.size() % 2) return false;
    for (size_t i = 0; i < s.size(); i += 2) {
        uint64_t v;
        if (!parse_u64(s.substr(i, 2), 16, &v)) return false;
        out->push_back(uint8_t(v));
    }
    return true;
}

// PEEK's limit: its hex must fit a reply (Json's 64 KiB buffer).
constexpr uint64_t kPeekMax = 16384;

void ok(Json& j) { j.begin_object().boolean("ok", true).end_object(); }

void error(Json& j, const char* cls, const std::string& message) {
    Diagnostic d;
    d.cls = cls;
    d.message = message;
    write_failure(j, d);
}

// LAUNCH <module> <kernel> gx gy gz bx by bz <dyn> <check|fast|engine> <threads> <nargs> <arg hex>...
void launch(const std::vector<std::string>& w, Json& j) {
    LaunchRequest r;
    uint64_t v[9];
    if (w.size() < 13) return error(j, "protocol", "LAUNCH needs at least 12 fields");
    r.module = w[1];
    r.kernel = w[2];
    for (int i = 0; i < 7; i++)
        if (!parse_u64(w[size_t(3 + i)], 10, &v[i])) return error(j, "protocol", "LAUNCH: bad number " + w[size_t(3 + i)]);
    for (int i = 0; i < 3; i++) {
        r.grid[i] = v[i] > 0xffffffffull ? 0xffffffffu : unsigned(v[i]);
        r.block[i] = v[3 + i] > 0xffffffffull ? 0xffffffffu : unsigned(v[3 + i]);
    }
    r.dynamic_shared_bytes = v[6];
    if (w[10] != "check" && w[10] != "fast" && w[10] != "engine")
        return error(j, "protocol", "LAUNCH: mode must be check, fast or engine");
    r.check = w[10] != "fast";
    r.engine_only = w[10] == "engine";
    if (!parse_u64(w[11], 10, &v[7]) || !parse_u64(w[12], 10, &v[8]))
        return error(j, "protocol", "LAUNCH: bad threads or nargs");
    r.threads = unsigned(v[7]);
    if (w.size() != 13 + v[8]) return error(j, "protocol", "LAUNCH: nargs does not match the arguments given");
    for (size_t i = 13; i < w.size(); i++) {
        r.args.emplace_back();
        if (!parse_hex_bytes(w[i], &r.args.back())) return error(j, "protocol", "LAUNCH: bad argument hex " + w[i]);
    }
    run_launch(r, j);
}

void handle(const std::string& line, Json& j) {
    std::vector<std::string> w = split(line);
    if (w.empty()) return error(j, "protocol", "empty command");
    const std::string& cmd = w[0];
    uint64_t a, b, c = 0;
    if (cmd == "ALLOC") { // ALLOC <addr hex> <bytes> <elem size> <label ...>
        if (w.size() < 4 || !parse_u64(w[1], 16, &a) || !parse_u64(w[2], 10, &b))
            return error(j, "protocol", "usage: ALLOC <addr hex> <bytes> <elem size> <label>");
        std::string label = rest(line, 3);
        if (w.size() >= 5 && parse_u64(w[3], 10, &c)) label = rest(line, 4);
        else c = 0; // the original form without an element size
        std::string e = g_arena.alloc(uintptr_t(a), size_t(b), label, size_t(c));
        return e.empty() ? ok(j) : error(j, "protocol", e);
    }
    if (cmd == "FREE") {
        if (w.size() != 2 || !parse_u64(w[1], 16, &a)) return error(j, "protocol", "usage: FREE <addr hex>");
        if (const Buffer* buf = g_arena.find(uintptr_t(a), 1)) unwritten_clear(buf->addr, buf->bytes);
        std::string e = g_arena.free(uintptr_t(a));
        return e.empty() ? ok(j) : error(j, "protocol", e);
    }
    if (cmd == "LOAD") {
        if (w.size() < 3) return error(j, "protocol", "usage: LOAD <module id> <path>");
        std::string e = load_module(w[1], rest(line, 2));
        return e.empty() ? ok(j) : error(j, "bad_module", e);
    }
    if (cmd == "UNWRITTEN" || cmd == "WROTE") { // <addr hex> <bytes>: see unwritten.h
        if (w.size() != 3 || !parse_u64(w[1], 16, &a) || !parse_u64(w[2], 10, &b))
            return error(j, "protocol", "usage: " + cmd + " <addr hex> <bytes>");
        if (cmd == "UNWRITTEN") unwritten_set(uintptr_t(a), size_t(b));
        else unwritten_clear(uintptr_t(a), size_t(b));
        return ok(j);
    }
    if (cmd == "WRITERS") { // WRITERS <path>: see launch.h
        if (w.size() < 2) return error(j, "protocol", "usage: WRITERS <path>");
        set_writers_path(rest(line, 1));
        return ok(j);
    }
    if (cmd == "LAUNCH") return launch(w, j);
    if (cmd == "GLOBAL") { // GLOBAL <module id> <name>: a __device__/__constant__ variable's address and size
        if (w.size() != 3) return error(j, "protocol", "usage: GLOBAL <module id> <name>");
        Module* m = find_module(w[1]);
        if (!m) return error(j, "bad_module", "GLOBAL: no module " + w[1] + " loaded");
        uintptr_t addr = 0;
        size_t bytes = 0;
        std::string e = find_global(*m, w[2], &addr, &bytes);
        if (!e.empty()) return error(j, "no_symbol", e);
        j.begin_object().boolean("ok", true).unum("addr", addr).unum("bytes", bytes).end_object();
        return;
    }
    if (cmd == "PEEK") { // PEEK <addr hex> <bytes>: reads (part of) a variable GLOBAL found, as hex
        if (w.size() != 3 || !parse_u64(w[1], 16, &a) || !parse_u64(w[2], 10, &b) || b > kPeekMax)
            return error(j, "protocol", "usage: PEEK <addr hex> <bytes, at most 16384>");
        if (!is_global_range(uintptr_t(a), size_t(b))) return error(j, "protocol", "PEEK outside the variables GLOBAL found");
        static char hex[2 * kPeekMax + 1];
        const auto* p = reinterpret_cast<const uint8_t*>(uintptr_t(a));
        for (uint64_t i = 0; i < b; i++) std::snprintf(hex + 2 * i, 3, "%02x", p[i]);
        hex[2 * b] = 0;
        j.begin_object().boolean("ok", true).str("data", hex).end_object();
        return;
    }
    if (cmd == "POKE") { // POKE <addr hex> <hex bytes>: writes (part of) a variable GLOBAL found
        std::vector<uint8_t> bytes;
        if (w.size() != 3 || !parse_u64(w[1], 16, &a) || !parse_hex_bytes(w[2], &bytes))
            return error(j, "protocol", "usage: POKE <addr hex> <hex bytes>");
        if (!is_global_range(uintptr_t(a), bytes.size())) return error(j, "protocol", "POKE outside the variables GLOBAL found");
        std::memcpy(reinterpret_cast<void*>(uintptr_t(a)), bytes.data(), bytes.size());
        return ok(j);
    }
    if (cmd == "DEVICE") { // DEVICE <sms> <threads per sm> <blocks per sm> <shared bytes per sm>
        uint64_t v[4];
        bool good = w.size() == 5;
        for (int i = 0; good && i < 4; i++) good = parse_u64(w[size_t(1 + i)], 10, &v[i]) && v[i] > 0;
        if (!good) return error(j, "protocol", "usage: DEVICE <sms> <threads per sm> <blocks per sm> <shared bytes per sm>");
        g_device = DeviceShape{unsigned(v[0]), unsigned(v[1]), unsigned(v[2]), size_t(v[3])};
        return ok(j);
    }
    if (cmd == "TIMEOUT") {
        if (w.size() != 2 || !parse_u64(w[1], 10, &a)) return error(j, "protocol", "usage: TIMEOUT <ms>");
        set_launch_timeout_ms(a);
        return ok(j);
    }
    error(j, "protocol", "unknown command " + cmd);
}

} // namespace

int main() {
    signal(SIGPIPE, SIG_IGN); // a vanished host must not kill us mid-reply
    install_crash_handlers();
    install_signal_stack(worker_at(0));
    watchdog_start();
    std::string e = g_arena.map_from_environment();
    if (!e.empty()) {
        std::fprintf(stderr, "gpubook-emu-worker: %s\n", e.c_str());
        return 2;
    }
    char* line = nullptr;
    size_t cap = 0;
    static Json reply;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        std::string cmd(line, size_t(n));
        while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == '\r')) cmd.pop_back();
        if (cmd == "QUIT") break; // no reply (DESIGN.md, "Change (host)" 1)
        reply = Json();
        handle(cmd, reply);
        reply.send(kReplyFd);
    }
    std::fflush(stdout);
    return 0;
}
