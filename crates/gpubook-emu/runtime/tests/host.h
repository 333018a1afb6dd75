// A minimal stand-in for the Rust host (crates/gpubook-emu/src/worker.rs), for testing the
// worker alone: an arena memfd mapped at the same address here and in the worker, a worker
// process with commands on its stdin, replies on fd 3 and kernel printf in a file.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

struct Reply {
    std::string json;
    bool ok() const { return json.find("\"ok\":true") != std::string::npos; }
    bool has(const std::string& s) const { return json.find(s) != std::string::npos; }
    std::string cls() const;
};

class Worker {
public:
    Worker(const std::string& worker_path, size_t arena_bytes = size_t(1) << 30);
    ~Worker();
    // Allocates device memory (with a 64 KiB gap after each buffer) and sends ALLOC.
    template <class T> T* alloc(size_t n, const char* label, int fill = 0xff) {
        return static_cast<T*>(alloc_bytes(n * sizeof(T), sizeof(T), label, fill));
    }
    void* alloc_bytes(size_t bytes, size_t elem, const char* label, int fill);
    Reply load(const std::string& id, const std::string& path);
    Reply command(const std::string& line);
    // LAUNCH with arguments given as raw bytes.
    Reply launch(const std::string& module, const std::string& kernel, unsigned gx, unsigned bx,
                 const std::vector<std::string>& args, const char* mode = "check", unsigned threads = 2,
                 size_t dyn = 0, unsigned gy = 1, unsigned gz = 1, unsigned by = 1, unsigned bz = 1);
    std::string printed(); // the worker's stdout so far
    bool exited();        // true once the worker process has ended
    void nudge();         // SIGUSR1, as the host's watchdog sends
    Reply reply();        // the next reply line (after nudge)
    void send(const std::string& line); // a command, without waiting for its reply

private:
    int pid_ = -1, cmd_fd_ = -1, reply_fd_ = -1, arena_fd_ = -1;
    char* arena_ = nullptr;
    size_t arena_bytes_ = 0, used_ = 0;
    std::string out_path_;
};

// The little-endian bytes of a kernel argument, in hex.
template <class T> std::string arg(const T& v) {
    static const char* digits = "0123456789abcdef";
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    std::string s;
    for (unsigned char c : b) { s += digits[c >> 4]; s += digits[c & 15]; }
    return s;
}
