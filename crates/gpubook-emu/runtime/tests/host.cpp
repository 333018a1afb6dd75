#include "host.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

std::string Reply::cls() const {
    size_t at = json.find("\"class\":\"");
    if (at == std::string::npos) return "";
    at += 9;
    return json.substr(at, json.find('"', at) - at);
}

Worker::Worker(const std::string& worker_path, size_t arena_bytes) : arena_bytes_(arena_bytes) {
    arena_fd_ = memfd_create("gpubook-arena", 0);
    if (ftruncate(arena_fd_, off_t(arena_bytes)) != 0) { perror("ftruncate"); exit(1); }
    // As the Rust side does (src/arena.rs, map_shared): an address in [32 TiB, 64 TiB), which the
    // worker, whose own layout is randomized, finds free. A kernel-chosen one sometimes collided.
    void* p = MAP_FAILED;
    for (uintptr_t k = 0; k < 32 && p == MAP_FAILED; k++) {
        void* hint = reinterpret_cast<void*>((uintptr_t(32) + (uintptr_t(getpid()) + k) % 32) << 40);
        p = mmap(hint, arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, arena_fd_, 0);
        if (p != MAP_FAILED && p != hint) {
            munmap(p, arena_bytes);
            p = MAP_FAILED;
        }
    }
    if (p == MAP_FAILED) p = mmap(nullptr, arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, arena_fd_, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    arena_ = static_cast<char*>(p);
    char tmpl[] = "/tmp/gpubook-worker-out-XXXXXX";
    int out = mkstemp(tmpl);
    out_path_ = tmpl;
    int cmd[2], rep[2];
    if (pipe(cmd) || pipe(rep)) { perror("pipe"); exit(1); }
    pid_ = fork();
    if (pid_ == 0) {
        // Move the sources above the targets first: one of them may itself be fd 3 or 4.
        int src[4] = {cmd[0], out, rep[1], arena_fd_}, target[4] = {0, 1, 3, 4};
        for (int& fd : src) fd = fcntl(fd, F_DUPFD, 10);
        for (int i = 0; i < 4; i++) dup2(src[i], target[i]);
        for (int fd = 5; fd < 64; fd++) close(fd);
        char addr[32], bytes[32];
        snprintf(addr, sizeof addr, "%#lx", (unsigned long)arena_);
        snprintf(bytes, sizeof bytes, "%zu", arena_bytes);
        // GPUBOOK_TEST_WORKER_AS_MIB: the worker under `ulimit -v` (tests of refused shadows).
        if (const char* mib = getenv("GPUBOOK_TEST_WORKER_AS_MIB")) {
            struct rlimit lim;
            lim.rlim_cur = lim.rlim_max = rlim_t(atol(mib)) << 20;
            setrlimit(RLIMIT_AS, &lim);
        }
        setenv("GPUBOOK_ARENA_FD", "4", 1);
        setenv("GPUBOOK_ARENA_ADDR", addr, 1);
        setenv("GPUBOOK_ARENA_BYTES", bytes, 1);
        execl(worker_path.c_str(), worker_path.c_str(), (char*)nullptr);
        perror("exec worker");
        _exit(127);
    }
    close(cmd[0]);
    close(rep[1]);
    close(out);
    cmd_fd_ = cmd[1];
    reply_fd_ = rep[0];
    signal(SIGPIPE, SIG_IGN);
}

Worker::~Worker() {
    if (!exited()) {
        (void)!write(cmd_fd_, "QUIT\n", 5);
        close(cmd_fd_);
        waitpid(pid_, nullptr, 0);
    }
    close(reply_fd_);
    munmap(arena_, arena_bytes_);
    close(arena_fd_);
    unlink(out_path_.c_str());
}

bool Worker::exited() {
    if (pid_ < 0) return true;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
    return pid_ < 0;
}

void Worker::nudge() { kill(pid_, SIGUSR1); }

void Worker::send(const std::string& line) {
    std::string l = line + "\n";
    (void)!write(cmd_fd_, l.data(), l.size());
}

Reply Worker::command(const std::string& line) {
    send(line);
    return reply();
}

Reply Worker::reply() {
    Reply r;
    char c;
    while (read(reply_fd_, &c, 1) == 1 && c != '\n') r.json += c;
    if (r.json.empty()) r.json = "{\"ok\":false,\"class\":\"no_reply\"}";
    return r;
}

void* Worker::alloc_bytes(size_t bytes, size_t elem, const char* label, int fill) {
    used_ += 64 * 1024; // guard gap
    used_ = (used_ + 4095) / 4096 * 4096;
    char* p = arena_ + used_;
    used_ += bytes;
    memset(p, fill, bytes);
    char line[256];
    snprintf(line, sizeof line, "ALLOC %#lx %zu %zu %s", (unsigned long)p, bytes, elem, label);
    Reply r = command(line);
    if (!r.ok()) { fprintf(stderr, "ALLOC failed: %s\n", r.json.c_str()); exit(1); }
    return p;
}

Reply Worker::load(const std::string& id, const std::string& path) { return command("LOAD " + id + " " + path); }

Reply Worker::launch(const std::string& module, const std::string& kernel, unsigned gx, unsigned bx,
                     const std::vector<std::string>& args, const char* mode, unsigned threads, size_t dyn,
                     unsigned gy, unsigned gz, unsigned by, unsigned bz) {
    char head[512];
    snprintf(head, sizeof head, "LAUNCH %s %s %u %u %u %u %u %u %zu %s %u %zu", module.c_str(), kernel.c_str(), gx,
             gy, gz, bx, by, bz, dyn, mode, threads, args.size());
    std::string line = head;
    for (const auto& a : args) line += " " + a;
    return command(line);
}

std::string Worker::printed() {
    FILE* f = fopen(out_path_.c_str(), "r");
    std::string s;
    if (!f) return s;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    fclose(f);
    return s;
}
