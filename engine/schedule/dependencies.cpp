// The dependency rule table and its resolution against a schedule. The table is built once
// from the rules listed in dependencies.hpp; everything else here only reads it.
#include "engine/schedule/dependencies.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "engine/schedule/action_facts.hpp"

namespace pipelens {
namespace {

constexpr int index_of(ActionKind kind) {
    return static_cast<int>(kind);
}

// Kinds in the order their names are offered when several produce one signal: B is the usual
// backward, I the split one.
constexpr std::array<ActionKind, kActionKindCount> kProducerOrder = {
    ActionKind::forward,         ActionKind::full_backward, ActionKind::backward_input,
    ActionKind::backward_weight, ActionKind::send_forward,  ActionKind::recv_forward,
    ActionKind::send_backward,   ActionKind::recv_backward, ActionKind::unshard,
    ActionKind::reshard,         ActionKind::reduce_grad,   ActionKind::overlap_forward_backward,
};

InputRule own(Signal signal) {
    return InputRule{signal, Source::stage, 0, 0, signal};
}

InputRule neighbour(Signal signal, int offset, Signal via_receive) {
    return InputRule{signal, Source::neighbour, static_cast<std::int8_t>(offset), 0, via_receive};
}

InputRule peer(Signal signal, int offset) {
    return InputRule{signal, Source::stage, static_cast<std::int8_t>(offset), 0, signal};
}

InputRule earlier_on_rank(Signal signal) {
    return InputRule{signal, Source::program_order, 0, 0, signal};
}

}  // namespace

DependencyRules::DependencyRules() {
    using K = ActionKind;
    using S = Signal;
    auto produce = [this](K kind, std::initializer_list<Signal> signals) {
        Products& products = products_[index_of(kind)];
        for (Signal signal : signals)
            products.signals[products.count++] = signal;
    };
    produce(K::forward, {S::forward, S::rank_compute});
    produce(K::backward_input, {S::input_gradient, S::weight_ready, S::rank_compute});
    produce(K::full_backward, {S::input_gradient, S::rank_compute});
    produce(K::backward_weight, {S::rank_compute});
    produce(K::reshard, {S::rank_compute});
    produce(K::send_forward, {S::sent_forward});
    produce(K::send_backward, {S::sent_backward});
    produce(K::recv_forward, {S::received_forward});
    produce(K::recv_backward, {S::received_backward});
    produce(K::unshard, {S::parameters});

    // A computation's neighbour is the peer of the receive it consumes, and across ranks that
    // receive's completion is what it waits for.
    auto neighbour_through_receive = [this](K computation, Signal neighbour_signal) {
        const K receive = *receive_consumed_by(computation);
        return neighbour(neighbour_signal, transfer_peer_offset(receive),
                         products_of(receive).signals[0]);
    };
    // Parameters first: among inputs that arrive together, the later ones name the wait.
    for (K kind : {K::forward, K::backward_input, K::full_backward, K::backward_weight})
        add_input(kind, earlier_on_rank(S::parameters));
    add_input(K::forward, neighbour_through_receive(K::forward, S::forward));
    for (K kind : {K::backward_input, K::full_backward}) {
        add_input(kind, own(S::forward));
        add_input(kind, neighbour_through_receive(kind, S::input_gradient));
    }
    add_input(K::backward_weight, own(S::weight_ready));
    add_input(K::send_forward, own(S::forward));
    add_input(K::send_backward, own(S::input_gradient));
    add_input(K::recv_forward, peer(S::sent_forward, transfer_peer_offset(K::recv_forward)));
    add_input(K::recv_backward, peer(S::sent_backward, transfer_peer_offset(K::recv_backward)));
    add_input(K::reduce_grad, earlier_on_rank(S::rank_compute));
    index_waiters();
}

const DependencyRules& DependencyRules::pytorch() {
    static const DependencyRules rules;
    return rules;
}

const DependencyRules& DependencyRules::pytorch_rendezvous() {
    // A receive is posted when its rank's program reaches it: the stream it runs on first waits
    // for the computation before it (NCCL's stream sync; a CPU rank runs that computation first).
    static const DependencyRules rules =
        pytorch()
            .with_input(ActionKind::recv_forward, earlier_on_rank(Signal::rank_compute))
            .with_input(ActionKind::recv_backward, earlier_on_rank(Signal::rank_compute));
    return rules;
}

void DependencyRules::add_input(ActionKind kind, InputRule rule) {
    if (kind == ActionKind::overlap_forward_backward)
        throw std::invalid_argument("OVERLAP_F_B waits for its parts' inputs; give rules to them");
    if (rule.stage_offset < -1 || rule.stage_offset > 1)
        throw std::invalid_argument(fmt::format(
            "a dependency reaches at most one stage away (got offset {})", rule.stage_offset));
    KindRules& rules = rules_[index_of(kind)];
    if (rules.count == kMaxInputs)
        throw std::invalid_argument(fmt::format(
            "{} already waits for {} inputs, the most a part can", kind_text(kind), kMaxInputs));
    rules.inputs[rules.count++] = rule;
}

DependencyRules DependencyRules::with_input(ActionKind kind, InputRule rule) const {
    DependencyRules variant = *this;
    variant.add_input(kind, rule);
    variant.index_waiters();
    return variant;
}

void DependencyRules::index_waiters() {
    waiter_offset_count_.fill(0);
    auto add = [this](Signal signal, std::int8_t offset) {
        const int index = static_cast<int>(signal);
        auto& offsets = waiter_offsets_[index];
        int& count = waiter_offset_count_[index];
        for (int i = 0; i < count; ++i)
            if (offsets[i] == offset)
                return;
        offsets[count++] = offset;
    };
    for (const KindRules& rules : rules_)
        for (int i = 0; i < rules.count; ++i) {
            const InputRule& rule = rules.inputs[i];
            if (rule.source == Source::program_order)
                continue;
            add(rule.signal, rule.stage_offset);
            if (rule.source == Source::neighbour)
                add(rule.via_receive, 0);
        }
}

DependencyRules::Producers DependencyRules::producers_of(Signal signal) const {
    Producers producers;
    for (ActionKind kind : kProducerOrder)
        for (Signal produced : products_[index_of(kind)])
            if (produced == signal && producers.count < static_cast<int>(producers.kinds.size()))
                producers.kinds[producers.count++] = kind;
    return producers;
}

std::string producer_text(const DependencyRules& rules, Signal signal, int stage, int microbatch) {
    const DependencyRules::Producers producers = rules.producers_of(signal);
    if (producers.count == 0)
        return "an earlier action of the rank";
    const ActionKind kind = producers.kinds[0];
    return action_text(
        make_action(stage, kind, needs_microbatch(kind) ? microbatch : kNoMicrobatch));
}

}  // namespace pipelens
