// The worker's own hang detector. A kernel that spins never yields its fiber, so nothing in
// the scheduler can notice; a separate OS thread waits for the launch's time limit, then
// interrupts the workers (SIGUSR2) to learn where each one is, reports `hang`, and exits.
#pragma once

#include <cstdint>

namespace gpubook::rt {

void watchdog_start();
void watchdog_arm(uint64_t launch_id, uint64_t limit_ms); // limit 0: no limit
void watchdog_disarm();

} // namespace gpubook::rt
