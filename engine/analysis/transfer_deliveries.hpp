// A run's transfers as its timeline shows them, and the one rule for when a transfer's delivery
// was seen: what calibration takes as the link's time in a run and what `diff` re-times
// transfers with.
//
// A transfer is a SEND and the RECV that waits for it (dependencies.hpp: RECV_F for the upstream
// SEND_F, RECV_B for the downstream SEND_B). Its delivery is the time from the SEND's start to
// the moment the receiving rank had the data. The runtime posts a receive at its RECV and waits
// for the data where a computation needs it, and records the RECV's end when that wait is over
// (PyTorch's irecv + wait), or, where the transport saw the data land (ranks as threads), then;
// a trace does not say which. So a RECV's end is surely the data's arrival only if the receiver
// was already waiting when the data came: its thread had reached the consuming computation (every
// computation and SEND before it in program order ended, every RECV posted: a RECV's start is
// its posting) no later than the SEND's start. A simulation's RECV starts with its send, not
// when posted; its transfers are what they are predicted to be, and only a real run's are asked.
// Otherwise the data may have landed long before it was asked for, and the RECV's end says only
// that the delivery took at most that long.
//
// Invariants: one entry per RECV whose SEND is found and both ended, in rank then program order;
// `seen` needs the consumer found and everything before it on its rank ended. Linear in the run's
// actions (a receive nobody consumes costs nothing extra).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/timed_schedule.hpp"

namespace pipelens::analysis {

struct TransferDelivery {
    ActionRef send;
    ActionRef receive;
    std::int64_t bytes = 0;       // as recorded on the SEND (else on the RECV); 0 unknown
    std::int64_t at_most_ns = 0;  // RECV end - SEND start: the delivery, or more
    bool seen = false;            // the receiver waited from the SEND's start: at_most_ns is it
};

std::vector<TransferDelivery> transfer_deliveries(const TimedSchedule& timed);

}  // namespace pipelens::analysis
