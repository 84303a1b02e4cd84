// Experiment -> TOML, the inverse of experiment_toml.cpp's reader: written so that reading it back
// gives the same experiment (durations in whole nanoseconds, sizes in bytes).
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include <toml++/toml.h>

#include "engine/experiment/experiment_toml.hpp"

namespace pipelens {
namespace {

// Durations print in whole nanoseconds so writing and reading back is exact.
toml::array duration_list(const std::vector<std::int64_t>& values, std::string_view unit) {
    toml::array array;
    for (std::int64_t value : values)
        array.push_back(fmt::format("{}{}", value, unit));
    return array;
}

toml::array byte_list(const std::vector<std::int64_t>& values) {
    toml::array array;
    for (std::int64_t value : values)
        array.push_back(value);
    return array;
}

toml::table layers_table(const LayerCosts& layers) {
    toml::table table;
    toml::array names;
    for (const std::string& name : layers.names)
        names.push_back(name);
    table.insert("names", std::move(names));
    table.insert("f", duration_list(layers.forward_ns, "ns"));
    table.insert("i", duration_list(layers.input_ns, "ns"));
    table.insert("w", duration_list(layers.weight_ns, "ns"));
    table.insert("b", duration_list(layers.backward_ns, "ns"));
    table.insert("held_bytes", byte_list(layers.held_bytes));
    table.insert("output_bytes", byte_list(layers.output_bytes));
    table.insert("gradient_bytes", byte_list(layers.gradient_bytes));
    table.insert("backward_peak_bytes", byte_list(layers.backward_peak_bytes));
    if (!layers.input_kept_bytes.empty())
        table.insert("input_kept_bytes", byte_list(layers.input_kept_bytes));
    for (auto [prefix, extra] :
         {std::pair{"stage_", &layers.stage_overhead}, std::pair{"loss_", &layers.loss}}) {
        const std::string key = prefix;
        table.insert(key + "f", fmt::format("{}ns", extra->forward_ns));
        table.insert(key + "i", fmt::format("{}ns", extra->input_ns));
        table.insert(key + "w", fmt::format("{}ns", extra->weight_ns));
        table.insert(key + "b", fmt::format("{}ns", extra->backward_ns));
        table.insert(key + "held_bytes", extra->held_bytes);
        table.insert(key + "kept_bytes", extra->kept_bytes);
        if (extra->input_kept_bytes != 0)
            table.insert(key + "input_kept_bytes", extra->input_kept_bytes);
    }
    return table;
}

}  // namespace

std::string experiment_to_toml(const Experiment& experiment) {
    toml::table schedule;
    if (experiment.schedule_file.empty())
        schedule.insert("kind", std::string(schedule_kind_name(experiment.shape.kind)));
    else
        schedule.insert("file", experiment.schedule_file);
    if (experiment.schedule_notation)
        schedule.insert("notation", experiment.schedule_notation == ActionNotation::legacy
                                        ? "legacy"
                                        : "current");
    // A schedule file fixes pp, v and m itself: written only where they were given, which the
    // file must then match (an unsettled 0, or v = 1 beside a file of two stages per rank, would
    // make a file no reader takes).
    const bool file = !experiment.schedule_file.empty();
    if (!file || !experiment.rank_count_source.empty())
        schedule.insert("pp", experiment.shape.rank_count);
    if (!file || !experiment.stages_per_rank_source.empty())
        schedule.insert("v", experiment.shape.stages_per_rank);
    if (!file || !experiment.microbatch_count_source.empty())
        schedule.insert("m", experiment.shape.microbatch_count);
    if (experiment.defer_receives)
        schedule.insert("defer_recv", true);
    if (experiment.max_activations.count > 0) {
        if (experiment.max_activations.times_pp)
            schedule.insert("max_activations", experiment.max_activations.text());
        else
            schedule.insert("max_activations", experiment.max_activations.count);
    }

    toml::table costs;
    if (experiment.cost_scope != CostScope::stage)
        costs.insert("per", std::string(cost_scope_name(experiment.cost_scope)));
    const auto insert_list = [&](std::string_view key, const std::vector<std::int64_t>& values,
                                 std::string_view unit) {
        if (!values.empty())
            costs.insert(key, duration_list(values, unit));
    };
    insert_list("f", experiment.forward_ns, "ns");
    insert_list("i", experiment.input_ns, "ns");
    insert_list("w", experiment.weight_ns, "ns");
    insert_list("b", experiment.backward_ns, "ns");
    insert_list("activation_bytes", experiment.activation_bytes, "B");
    insert_list("held_activation_bytes", experiment.held_activation_bytes, "B");
    costs.insert("overlap_efficiency", experiment.overlap_efficiency);
    if (!experiment.rank_slowdown.empty()) {
        toml::array slowdown;
        for (double factor : experiment.rank_slowdown)
            slowdown.push_back(factor);
        costs.insert("rank_slowdown", std::move(slowdown));
    }
    costs.insert("unshard", fmt::format("{}ns", experiment.unshard_ns));
    costs.insert("reshard", fmt::format("{}ns", experiment.reshard_ns));
    costs.insert("reduce_grad", fmt::format("{}ns", experiment.reduce_grad_ns));

    toml::table network;
    network.insert("intra_host_latency", fmt::format("{}ns", experiment.intra_host.latency_ns));
    network.insert("inter_host_latency", fmt::format("{}ns", experiment.inter_host.latency_ns));
    // An unlimited link has no bandwidth key.
    if (experiment.intra_host.bytes_per_ns > 0)
        network.insert("intra_host_bandwidth", experiment.intra_host.bytes_per_ns);
    if (experiment.inter_host.bytes_per_ns > 0)
        network.insert("inter_host_bandwidth", experiment.inter_host.bytes_per_ns);
    network.insert("ranks_per_host", experiment.ranks_per_host);
    if (experiment.rendezvous)
        network.insert("rendezvous", true);
    if (experiment.send_issue_ns > 0)
        network.insert("send_issue", fmt::format("{}ns", experiment.send_issue_ns));
    if (experiment.posted_receive_buffers)
        network.insert("posted_receive_buffers", true);

    toml::table document;
    if (!experiment.name.empty())
        document.insert("name", experiment.name);
    document.insert("schedule", std::move(schedule));
    document.insert("costs", std::move(costs));
    if (experiment.transformer) {
        const TransformerSpec& spec = *experiment.transformer;
        toml::table transformer;
        if (spec.layers_per_stage.empty()) {
            transformer.insert("layers", spec.layers);
        } else {
            toml::array layers;
            for (int count : spec.layers_per_stage)
                layers.push_back(count);
            transformer.insert("layers_per_stage", std::move(layers));
        }
        transformer.insert("hidden", spec.hidden);
        transformer.insert("sequence", spec.sequence);
        transformer.insert("microbatch_size", spec.microbatch_size);
        transformer.insert("heads", spec.heads);
        transformer.insert("dtype", spec.dtype);
        transformer.insert("device_tflops", spec.device_tflops);
        if (spec.vocabulary > 0)
            transformer.insert("vocabulary", spec.vocabulary);
        document.insert("transformer", std::move(transformer));
    }
    if (experiment.layers)
        document.insert("layers", layers_table(*experiment.layers));
    document.insert("network", std::move(network));

    const ModelDescription& described = experiment.model;
    toml::table model;
    model.insert("name", described.name);
    model.insert("layers", described.layers);
    model.insert("hidden", described.hidden);
    model.insert("sequence", described.sequence);
    model.insert("heads", described.heads);
    if (!described.input_shape.empty()) {
        toml::array shape;
        for (std::int64_t size : described.input_shape)
            shape.push_back(size);
        model.insert("input_shape", std::move(shape));
    }
    if (!described.split_points.empty()) {
        toml::array points;
        for (const std::string& point : described.split_points)
            points.push_back(point);
        model.insert("split_points", std::move(points));
    }
    model.insert("batch_size", described.batch_size);
    model.insert("chunk_dim", described.chunk_dim);
    model.insert("seed", static_cast<std::int64_t>(described.seed));
    document.insert("model", std::move(model));
    toml::table run;
    run.insert("transport", experiment.run.transport);
    run.insert("timeout", fmt::format("{}ns", experiment.run.timeout_ns));
    document.insert("run", std::move(run));
    if (experiment.jitter) {
        toml::array quantiles;
        for (double value : experiment.jitter->quantiles)
            quantiles.push_back(value);
        toml::table jitter;
        jitter.insert("quantiles", std::move(quantiles));
        if (!experiment.jitter->step_quantiles.empty()) {
            toml::array steps;
            for (double value : experiment.jitter->step_quantiles)
                steps.push_back(value);
            jitter.insert("step_quantiles", std::move(steps));
        }
        jitter.insert("centre", std::string(jitter_centre_name(experiment.jitter->centre)));
        jitter.insert("draws", experiment.jitter->draws);
        jitter.insert("seed", experiment.jitter->seed);
        document.insert("jitter", std::move(jitter));
    }
    std::ostringstream out;
    out << document << "\n";
    return out.str();
}

}  // namespace pipelens
