#include "json.h"

#include <cstdio>
#include <unistd.h>

namespace gpubook::rt {

void Json::raw(const char* s) {
    while (*s && len_ + 2 < sizeof(buf_)) buf_[len_++] = *s++;
    buf_[len_] = 0;
}

void Json::quoted(const char* s) {
    raw("\"");
    for (; *s; s++) {
        unsigned char c = static_cast<unsigned char>(*s);
        char esc[8] = {0};
        if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = char(c); }
        else if (c == '\n') { esc[0] = '\\'; esc[1] = 'n'; }
        else if (c == '\t') { esc[0] = '\\'; esc[1] = 't'; }
        else if (c < 0x20) std::snprintf(esc, sizeof esc, "\\u%04x", c);
        else esc[0] = char(c);
        raw(esc);
    }
    raw("\"");
}

void Json::comma() {
    if (need_comma_) raw(",");
    need_comma_ = true;
}

Json& Json::key(const char* k) {
    comma();
    if (k) { quoted(k); raw(":"); }
    return *this;
}
Json& Json::begin_object() { if (len_) key(nullptr); raw("{"); need_comma_ = false; return *this; }
Json& Json::begin_object(const char* k) { key(k); raw("{"); need_comma_ = false; return *this; }
Json& Json::end_object() { raw("}"); need_comma_ = true; return *this; }
Json& Json::begin_array(const char* k) { key(k); raw("["); need_comma_ = false; return *this; }
Json& Json::end_array() { raw("]"); need_comma_ = true; return *this; }
Json& Json::str(const char* k, const char* v) { key(k); quoted(v ? v : ""); return *this; }
Json& Json::boolean(const char* k, bool v) { key(k); raw(v ? "true" : "false"); return *this; }
Json& Json::num(const char* k, int64_t v) {
    char t[32];
    std::snprintf(t, sizeof t, "%lld", static_cast<long long>(v));
    key(k); raw(t);
    return *this;
}
Json& Json::unum(const char* k, uint64_t v) {
    char t[32];
    std::snprintf(t, sizeof t, "%llu", static_cast<unsigned long long>(v));
    key(k); raw(t);
    return *this;
}
Json& Json::dim3(const char* k, const unsigned v[3]) {
    char t[48];
    std::snprintf(t, sizeof t, "[%u,%u,%u]", v[0], v[1], v[2]);
    key(k); raw(t);
    return *this;
}

void Json::send(int fd) {
    buf_[len_] = '\n';
    size_t n = len_ + 1, off = 0;
    while (off < n) {
        ssize_t w = ::write(fd, buf_ + off, n - off);
        if (w <= 0) break;
        off += size_t(w);
    }
    buf_[len_] = 0;
}

} // namespace gpubook::rt
