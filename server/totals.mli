(** Counters summed over every worker: responses by status class, bytes
    sent, connections accepted, and connections by state, for the status
    endpoint ({!Stats}, [--stats-listen]).

    {b Memory.} One table of fixed rows in memory shared by the
    processes ({!Httpz_sys.Mapped.map_shared}), made by {!create} before
    the workers fork. Each worker takes a row of its own at start
    ({!claim}: an atomic compare-and-swap of the row's pid, so two
    workers never share one) and is its only writer: no lock, no atomic
    on the request path, plain stores to words only it writes. A reader
    sums the rows and may see one worker's counters a request behind.

    {b Lifetimes.} A worker that exits (restart, reload) leaves its
    counters in its row; the next worker that finds the row's process gone
    takes it over and counts on from there, so the totals cover the
    server's whole life. Connection states are gauges: each worker writes
    its own once a second (and zero at exit); rows whose process is gone
    do not count in them. With more processes at once than rows (a reload
    while two earlier generations still drain, past [rows]), a worker
    finds no row and is not counted (one warning). *)

type t

val create : rows:int -> t
(** [create ~rows] maps [rows] rows of 128 bytes, zeroed. Allocates. *)

val rows_for : workers:int -> int
(** [4 * workers + 4]: room for the workers, a generation draining after
    a reload and another starting. *)

val claim : t -> int
(** [claim t] takes a row for the calling process: a free one, or one
    whose process is gone (its gauges zeroed, its counters kept); [-1]
    when none. Allocates (checks processes). *)

val release : t -> int -> unit
(** [release t row]: the process is leaving; its gauges are zeroed, its
    counters kept (the row stays taken until another process claims it). *)

val response : t -> int -> status:int -> bytes:int -> unit
(** [response t row ~status ~bytes] counts one response of [status]
    (100-599; others are not counted by class) of which [bytes] left.
    [row < 0]: nothing. Does not allocate. *)

val accepted : t -> int -> unit
(** [accepted t row] counts one connection accepted. Does not allocate. *)

val connections : t -> int -> reading:int -> writing:int -> idle:int -> handling:int -> unit
(** [connections t row ~reading ~writing ~idle ~handling] sets the
    worker's gauges. Does not allocate. *)

type summary = {
  workers : int;  (** rows whose process runs *)
  by_class : int array;  (** [by_class.(k)]: responses of status [k]xx, [k] in 1..5; [.(0)] unused *)
  bytes_sent : int;
  accepted_connections : int;
  reading : int;
  writing : int;
  idle : int;
  handling : int;
}

val summary : t -> summary
(** [summary t] sums every row (gauges: of running processes only).
    Allocates. *)

val json : summary -> string
(** One JSON object:
    [{"workers":2,"responses":{"1xx":0,"2xx":10,"3xx":0,"4xx":1,"5xx":0},
    "responses_total":11,"bytes_sent":12345,"connections_accepted":4,
    "connections":{"reading":0,"writing":1,"idle":2,"handling":0}}]. *)

val prometheus : summary -> string
(** The same in Prometheus's text exposition format (0.0.4):
    [httpz_workers], [httpz_responses_total{class="2xx"}],
    [httpz_sent_bytes_total], [httpz_connections_accepted_total],
    [httpz_connections{state="idle"}], each with its HELP and TYPE. *)

val text : summary -> string
(** The same as [name value] lines ([responses_2xx 10], …), for a
    shell or a monitoring agent. *)
