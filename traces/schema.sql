-- pipelens trace schema version 10.
--
-- A trace is one SQLite file holding any number of runs (simulated or real) of pipeline
-- schedules. This text is compiled into pipelens (traces/CMakeLists.txt embeds it) and executed
-- once, inside one transaction, by the TraceWriter that creates a file; the writer then fills
-- `meta`. Changing anything here that a reader relies on means a new schema version: bump
-- kSchemaVersion in traces/trace_reader.hpp and the number on the first line, together, and
-- put what the new version adds after a line `-- @since N`: a writer appending to an older
-- file runs exactly the sections newer than the file (schema_sql_since), and readers of the
-- new version still open older files (a table an older file lacks reads as empty).
--
-- Conventions:
--   * Times and durations are INTEGER nanoseconds. Run start/finish times are wall-clock ns since
--     the Unix epoch; action, memory and error times are ns on the run's own clock,
--     which starts at 0 (the start of the simulated step, or of a real run).
--   * Sizes are INTEGER bytes.
--   * -1 stands for "none" in integer columns mirroring pipelens' C++ records (no stage, no
--     microbatch, no pair); NULL is used only where the record type has an optional field.
--   * What an action is is stored as integers (kind, stage, microbatch, and the parts of an
--     OVERLAP_F_B in `action_parts`); its PyTorch text is derived when read. Text that repeats
--     (event names) is stored once in `strings` and referenced by id.
--   * Every row but `meta` and `strings` belongs to a run. The REFERENCES clauses document that
--     and let `PRAGMA foreign_key_check` audit a file, but pipelens does not turn on
--     `PRAGMA foreign_keys`: enforcing them costs a parent lookup per inserted row on the hot
--     path, and the writer already guarantees it only adds rows to a run it began.

-- Key/value facts about the file itself. The writer stores at least:
--   schema_version  this schema's version, '10'; readers refuse versions newer than they know
--   application     'pipelens', which tells a pipelens trace from any other SQLite file
--   writer          the pipelens version that created the file, e.g. 'pipelens 0.1.0'
--   created_at_ns   wall-clock ns since the Unix epoch when the file was created
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Interned text: each distinct action label or event name once. Ids are assigned by SQLite and
-- never reused or changed, so a reader can cache them.
CREATE TABLE strings (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE
);

-- One row per run. A run is inserted as 'running' when it begins and only becomes 'finished' or
-- 'failed' when its writer says so, so a run whose process died stays 'running' forever: that
-- is how a reader recognises an unfinished run.
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('sim', 'real')),  -- simulated or run on real ranks
    schedule TEXT NOT NULL,     -- schedule kind, PyTorch's name, e.g. 'Interleaved1F1B'
    pp INTEGER NOT NULL,        -- number of ranks
    v INTEGER NOT NULL,         -- stages per rank
    m INTEGER NOT NULL,         -- microbatches per step
    config TEXT NOT NULL,       -- the full experiment configuration (TOML or JSON text)
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
    started_at_ns INTEGER NOT NULL,  -- wall clock, ns since the Unix epoch
    finished_at_ns INTEGER,     -- wall clock when finished or failed; NULL while running
    step_time_ns INTEGER,       -- duration of one step; NULL until finished
    bubble_ratio REAL,          -- idle share of the step over all ranks (0..1); NULL until finished
    failure TEXT                -- why a failed run failed; NULL otherwise
);

-- Per-rank summary of a run, one row per rank.
CREATE TABLE ranks (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    busy_ns INTEGER NOT NULL,            -- time the rank's compute stream was busy
    bubble_ns INTEGER NOT NULL,          -- time it was idle within the step
    bubble_ratio REAL NOT NULL,          -- bubble_ns / step time (0..1)
    peak_memory_bytes INTEGER NOT NULL,  -- highest activation/parameter memory seen
    warmup_ns INTEGER NOT NULL,          -- idle before the rank's first computation
    cooldown_ns INTEGER NOT NULL,        -- idle after its last computation until the step ends
    waiting_on TEXT NOT NULL,            -- JSON object: peer rank -> ns waited on it, {"1":2000}
    PRIMARY KEY (run_id, rank)
) WITHOUT ROWID;

-- Every action every rank performed: compute (F, I, W, B, OVERLAP_F_B, FSDP) and communication
-- (SEND_*, RECV_*). This is the big table (millions of rows per run), so it holds integers only;
-- the label text lives in `strings`.
CREATE TABLE actions (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    step INTEGER NOT NULL,        -- index of the action in the rank's action list
    lane INTEGER NOT NULL,        -- 0 compute stream, 1 communication stream
    kind INTEGER NOT NULL,        -- pipelens::ActionKind as its integer value (0 = F ... 11)
    stage INTEGER NOT NULL,       -- -1 for OVERLAP_F_B containers
    microbatch INTEGER NOT NULL,  -- -1 where the action has none (FSDP actions, containers)
    label_id INTEGER NOT NULL REFERENCES strings (id),  -- PyTorch action text, e.g. '0SEND_F3'
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,      -- end_ns >= start_ns
    bytes INTEGER NOT NULL,       -- bytes moved (communication) or produced; 0 when unknown
    pair_id INTEGER NOT NULL,     -- SEND/RECV pair id (see `pairs`), -1 otherwise
    PRIMARY KEY (run_id, rank, start_ns, step)
) WITHOUT ROWID;
-- The table is clustered on (run_id, rank, start_ns, step) instead of carrying a separate index:
-- one B-tree serves both "all actions of a run in (rank, time) order" and "actions of one rank
-- in a time window", and a writer adding a rank's actions in program order appends to it (about
-- 20% more rows per second than a rowid table plus an index). The window query bounds start_ns
-- by the window's end and filters end_ns, so it scans the rank's actions from the start of the
-- step up to the window's end. step makes the key unique and orders actions that start together.

-- Each SEND/RECV pair once per training step (see version 8 below): which action on which rank
-- sends and which receives.
CREATE TABLE pairs (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    pair_id INTEGER NOT NULL,
    send_rank INTEGER NOT NULL,
    send_step INTEGER NOT NULL,  -- actions.step of the SEND on send_rank
    recv_rank INTEGER NOT NULL,
    recv_step INTEGER NOT NULL,  -- actions.step of the RECV on recv_rank
    bytes INTEGER NOT NULL,      -- payload size
    PRIMARY KEY (run_id, pair_id)
) WITHOUT ROWID;

-- Memory in use on a rank over time: one sample whenever it changes.
CREATE TABLE memory (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    time_ns INTEGER NOT NULL,
    bytes INTEGER NOT NULL       -- memory in use from time_ns until the rank's next sample
);
CREATE INDEX memory_by_rank_time ON memory (run_id, rank, time_ns);

-- ShapeEnv-style recorded calls: a tree per rank (parent is the sequence of the enclosing
-- event). Filled in by the events work; present from version 1 so files stay compatible.
CREATE TABLE events (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    sequence INTEGER NOT NULL,   -- order of the call on its rank
    parent INTEGER,              -- sequence of the enclosing event; NULL at top level
    name_id INTEGER NOT NULL REFERENCES strings (id),  -- the call's name
    arguments TEXT NOT NULL,     -- JSON
    outcome TEXT NOT NULL        -- 'ok' or the error text
);
CREATE INDEX events_by_rank_sequence ON events (run_id, rank, sequence);

-- Mismatches and failures seen during a run, in the order they were recorded (id).
CREATE TABLE errors (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,        -- -1 when not tied to a rank
    stage INTEGER NOT NULL,       -- -1 when not tied to a stage
    microbatch INTEGER NOT NULL,  -- -1 when not tied to a microbatch
    action TEXT NOT NULL,         -- action text when one was running, '' otherwise
    kind TEXT NOT NULL,           -- e.g. 'shape_mismatch', 'timeout', 'rank_died'
    expected TEXT NOT NULL,
    actual TEXT NOT NULL,
    message TEXT NOT NULL,
    time_ns INTEGER               -- when it was seen, on the run's clock; NULL when unknown
);
CREATE INDEX errors_by_run ON errors (run_id);

-- Sharding propagation decisions, one per operator, in propagation order. Filled in by the
-- sharding work; present from version 1 so files stay compatible.
CREATE TABLE sharding (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    sequence INTEGER NOT NULL,   -- order of the decision within the run
    op TEXT NOT NULL,            -- operator schema, e.g. 'aten.mm.default(...)'
    mesh TEXT NOT NULL,          -- e.g. "DeviceMesh((tp=4), 'cuda', stride=(1,))"
    strategies TEXT NOT NULL,    -- JSON list of {input_specs, output_spec, costs, total}
    chosen INTEGER NOT NULL,     -- index into strategies, -1 when none was chosen
    redistributions TEXT NOT NULL  -- JSON list
);
CREATE INDEX sharding_by_sequence ON sharding (run_id, sequence);

-- @since 2
-- The engine state each rank ended a run in: what `pipelens replay --check` compares a replay
-- of the rank's events with. `state` is a JSON array of [field, value] pairs in the state's own
-- order, values printed in their normalised form (see engine/recorder/pipeline_state.hpp).
CREATE TABLE state_snapshots (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    after_sequence INTEGER NOT NULL,  -- the last event whose effect the state includes
    state TEXT NOT NULL,
    PRIMARY KEY (run_id, rank)
) WITHOUT ROWID;

-- @since 3
-- When each recorded call was made, on the run's clock (ns; negative before the step began,
-- as every set-up call of a real run is); NULL where the call has no moment, as in a
-- simulation, whose calls only build its configuration.
ALTER TABLE events ADD COLUMN time_ns INTEGER;

-- @since 4
-- An action's text is no longer stored: it follows from kind, stage and microbatch (and, for an
-- OVERLAP_F_B, its parts below), so a million actions no longer add a million strings. The
-- table is rebuilt with `label_id` optional: rows written before version 4 keep their stored
-- text (the reader shows it as it was), rows written since leave it NULL.
CREATE TABLE actions_v4 (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    step INTEGER NOT NULL,        -- index of the action in the rank's action list
    lane INTEGER NOT NULL,        -- 0 compute stream, 1 communication stream
    kind INTEGER NOT NULL,        -- pipelens::ActionKind as its integer value (0 = F ... 11)
    stage INTEGER NOT NULL,       -- -1 for OVERLAP_F_B containers
    microbatch INTEGER NOT NULL,  -- -1 where the action has none (FSDP actions, containers)
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,      -- end_ns >= start_ns
    bytes INTEGER NOT NULL,       -- bytes moved (communication) or produced; 0 when unknown
    pair_id INTEGER NOT NULL,     -- SEND/RECV pair id (see `pairs`), -1 otherwise
    label_id INTEGER REFERENCES strings (id),  -- text stored before version 4; NULL since
    PRIMARY KEY (run_id, rank, start_ns, step)
) WITHOUT ROWID;
INSERT INTO actions_v4 (run_id, rank, step, lane, kind, stage, microbatch, start_ns, end_ns,
                        bytes, pair_id, label_id)
    SELECT run_id, rank, step, lane, kind, stage, microbatch, start_ns, end_ns, bytes, pair_id,
           label_id FROM actions;
DROP TABLE actions;
ALTER TABLE actions_v4 RENAME TO actions;

-- Runs from this id on were written at version 4 or later, so none of their actions has a stored
-- text: readers look for older texts only in runs before it.
INSERT INTO meta (key, value)
    SELECT 'first_run_with_derived_labels', coalesce(max(id), 0) + 1 FROM runs;

-- The parts of each OVERLAP_F_B action, in order: `(0F7;7B3)OVERLAP_F_B` is two rows.
CREATE TABLE action_parts (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    step INTEGER NOT NULL,        -- actions.step of the OVERLAP_F_B on that rank
    part INTEGER NOT NULL,        -- 0, 1, ...
    kind INTEGER NOT NULL,
    stage INTEGER NOT NULL,
    microbatch INTEGER NOT NULL,
    PRIMARY KEY (run_id, rank, step, part)
) WITHOUT ROWID;

-- The viewer reads each rank's memory samples with their bytes: the index covers them, so a
-- sample costs no second lookup in the table.
DROP INDEX memory_by_rank_time;
CREATE INDEX memory_by_rank_time ON memory (run_id, rank, time_ns, bytes);

-- @since 5
-- A real run's ranks are put on one clock, rank 0's: a rank reading the host clock rank 0 reads
-- (threads, processes of one boot) is placed on it exactly (uncertainty 0); a rank of another
-- host measures its clock against rank 0's by ping-pong after the step
-- (engine/run_record/clock_offset.hpp) and its times are moved by the offset. Rank 0's clock
-- minus the rank's, and how far the true offset may be from it (ns): a RECV may appear to end
-- before its SEND starts by at most the two ranks' uncertainties. NULL where nothing placed the
-- rank (simulations, and a failed run's ranks of another host: their times stay on their own
-- clock, zero at their own exit from the step's barrier).
ALTER TABLE ranks ADD COLUMN clock_offset_ns INTEGER;
ALTER TABLE ranks ADD COLUMN clock_uncertainty_ns INTEGER;

-- @since 6
-- What `pipelens run --profile` measured after a real run's step, every rank at once: each
-- stage's and each model layer's compute times (quantity F, I, W, B, OVERLAP_F_B; ns) and
-- memory (held_bytes kept per microbatch from F to backward, backward_peak_bytes above that
-- during a backward, gradient_bytes of its weight gradients, output_bytes it hands on per
-- microbatch, kept_bytes still held after the backward until the step ends), and each link's one-way time for
-- a message of `bytes` (quantity 'link', from `rank` to `peer`). median, low and high are the
-- median and the 10th and 90th percentiles of `samples` timed repetitions after warm-up.
CREATE TABLE profile (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    rank INTEGER NOT NULL,
    stage INTEGER NOT NULL,      -- -1 for links
    layer INTEGER NOT NULL,      -- the model layer's index; -1 for a whole stage or a link;
                                 -- -2 for the last stage's loss, timed alone
    layer_name TEXT NOT NULL,    -- e.g. 'layers.3'; '' for stages and links
    quantity TEXT NOT NULL,
    peer INTEGER NOT NULL,       -- links: the other rank; -1 otherwise
    bytes INTEGER NOT NULL,      -- links: the message size; 0 otherwise
    median INTEGER NOT NULL,
    low INTEGER NOT NULL,
    high INTEGER NOT NULL,
    samples INTEGER NOT NULL
);
CREATE INDEX profile_by_run ON profile (run_id);

-- @since 7
-- When the action a failure interrupted had started, on the same clock as time_ns: the viewer
-- draws it in flight, from here to the failure. NULL when no action was running (a failure while
-- waiting for inputs, a rank that never reported) and in files older than version 7.
ALTER TABLE errors ADD COLUMN started_ns INTEGER;

-- @since 8
-- A run of `pipelens run --steps N` holds every SEND and RECV once per training step, and each
-- step's copy is a pair of its own: step k's pair ids are the first step's plus k times the
-- run's pair count, each action row carries its own step's id, and `training_step` says which
-- step a pair belongs to (0 the first). Joining pairs to actions on (run_id, rank, pair_id)
-- finds each step's copy exactly once.
ALTER TABLE pairs ADD COLUMN training_step INTEGER NOT NULL DEFAULT 0;

-- Runs written before shared one pair among all their steps' copies. Each copy after the first
-- gets its step's id and its pair a row, so they read as a newer writer records them. A copy's
-- step is its place among the rows of its index on its rank, by start: a rank runs its list
-- once per step, one step after the other.
CREATE TEMP TABLE pair_steps AS
    SELECT run_id, rank, step, start_ns,
           row_number() OVER (PARTITION BY run_id, rank, step ORDER BY start_ns) - 1
               AS training_step
    FROM actions WHERE pair_id >= 0;
CREATE TEMP TABLE pair_counts AS
    SELECT run_id, max(id) + 1 AS count FROM (
        SELECT run_id, pair_id AS id FROM pairs
        UNION ALL SELECT run_id, pair_id AS id FROM actions WHERE pair_id >= 0)
    GROUP BY run_id;
UPDATE actions SET pair_id = actions.pair_id + s.training_step * c.count
    FROM temp.pair_steps AS s JOIN temp.pair_counts AS c ON c.run_id = s.run_id
    WHERE s.training_step > 0 AND actions.run_id = s.run_id AND actions.rank = s.rank
        AND actions.step = s.step AND actions.start_ns = s.start_ns;
INSERT INTO pairs (run_id, pair_id, send_rank, send_step, recv_rank, recv_step, bytes,
                   training_step)
    SELECT p.run_id, p.pair_id + s.training_step * c.count, p.send_rank, p.send_step,
           p.recv_rank, p.recv_step, p.bytes, s.training_step
    FROM pairs AS p
        JOIN temp.pair_counts AS c ON c.run_id = p.run_id
        JOIN (SELECT DISTINCT run_id, training_step FROM temp.pair_steps
              WHERE training_step > 0) AS s ON s.run_id = p.run_id;
DROP TABLE temp.pair_steps;
DROP TABLE temp.pair_counts;

-- @since 9
-- An action its integers cannot name keeps its text in label_id again: an imported
-- flight-recorder op ("nccl:all_reduce [pg 0, #3]") is stored with the pipeline kind nearest it
-- (a collective as REDUCE_GRAD or UNSHARD, a p2p op as SEND_F or RECV_F) for the analyses, and
-- its stage and microbatch hold its process group or peer and its sequence number, which as
-- "0REDUCE_GRAD3" would name the wrong thing. Pipeline actions still store no text. The partial
-- index lists the rows that do, so a reader finds them without reading the others.
CREATE INDEX actions_with_text ON actions (run_id, rank, step) WHERE label_id IS NOT NULL;

-- @since 10
-- How long a real run's rank was ready to run but had no core in the step its other figures
-- describe (ns; the median step of a run of several; the kernel's run-queue delay of the rank's
-- own thread, engine/run_record/run_queue_wait.hpp). Its times, and the costs calibrated from
-- them, hold that wait: a rank with cores of its own waits close to nothing. NULL where it was
-- not measured (simulations, imports, a rank that recorded no step, a kernel that does not keep
-- the figure).
ALTER TABLE ranks ADD COLUMN core_wait_ns INTEGER;
