// One LAUNCH: validate the configuration as a GPU would, run the blocks (on this thread in
// check mode, spread over OS threads in fast mode), reply.
#pragma once

#include "json.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpubook::rt {

struct LaunchRequest {
    std::string module;
    std::string kernel;
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    uint64_t dynamic_shared_bytes = 0;
    bool check = true;
    bool engine_only = false; // check mode with the access checks off (emu-bench's engine column)
    unsigned threads = 0; // fast mode's OS threads; 0: one per core
    std::vector<std::vector<uint8_t>> args;
};

// Runs the launch and writes the reply object into `reply`.
void run_launch(const LaunchRequest& req, Json& reply);

// WRITERS <path>: the next launch, if it runs in check mode and succeeds, writes who wrote
// each element of the buffers it stored to into `path` (races.h, races_write_writers).
void set_writers_path(std::string path);

// Per-launch time limit in milliseconds (TIMEOUT command); 0 disables the worker's own watchdog.
void set_launch_timeout_ms(uint64_t ms);

// Called by the watchdog thread every few milliseconds: in fast mode, when no block has
// finished for a while and blocks are still waiting to start, add an OS thread, so blocks that
// wait for blocks not yet started (a persistent kernel) get to run together.
void launch_poll();

} // namespace gpubook::rt
