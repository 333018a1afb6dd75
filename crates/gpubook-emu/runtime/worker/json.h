// A tiny JSON writer into a fixed buffer: no allocation, so the crash and hang reporters
// can use it from a signal handler. Replies are one object per line on fd 3.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpubook::rt {

class Json {
public:
    Json() { buf_[0] = 0; }
    Json& begin_object();
    Json& begin_object(const char* key); // a member object: "key":{
    Json& end_object();
    Json& begin_array(const char* key); // key may be null inside an array
    Json& end_array();
    Json& key(const char* k);
    Json& str(const char* k, const char* v);
    Json& num(const char* k, int64_t v);
    Json& unum(const char* k, uint64_t v);
    Json& boolean(const char* k, bool v);
    Json& dim3(const char* k, const unsigned v[3]);
    const char* c_str() const { return buf_; }
    size_t size() const { return len_; }
    // Writes the object and a newline to `fd` with write(2).
    void send(int fd);

private:
    void comma();
    void raw(const char* s);
    void quoted(const char* s);
    char buf_[64 * 1024];
    size_t len_ = 0;
    bool need_comma_ = false;
};

// The file descriptor replies go to (3, from the protocol).
constexpr int kReplyFd = 3;

} // namespace gpubook::rt
