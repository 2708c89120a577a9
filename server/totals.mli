(** Counters summed over every worker: responses by status class, bytes
    sent, connections accepted, and connections by state, for the status
    endpoint ({!Stats}, [--stats-listen]); and for Prometheus, requests by
    site, protocol and status class, their durations as a histogram and
    the body bytes sent, by site and protocol ({!exchange}, {!prometheus}).

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
    finds no row and is not counted (one warning).

    {b Sites.} A row holds a column of counters per site: for each of the
    3 protocols, 5 status classes, 12 duration buckets, the sum of the
    durations and the bytes (57 words a column). The columns are made
    with the table, for the sites known then ({!set_sites}) and as many
    again (at least 8) for sites a reload adds; two more count what no
    site answered (["(other)"]: a [Host] no site takes, a site beyond the
    room) and the status listener's answers (["(status)"]). A site keeps
    its column by name across reloads; a site a reload removes keeps its
    counters. So memory is fixed at start: [rows × (16 + 57 × columns)]
    words, and counting a request writes words of the row only. *)

type t

val create : rows:int -> t
(** [create ~rows] maps [rows] zeroed rows of [16 + 57 × columns] words
    (columns: see above) and the site names, and names the columns of the
    sites given to {!set_sites} so far (["default"] when none). The
    process's table from now on. Allocates. *)

val set_sites : string array -> unit
(** [set_sites names]: the sites of the configuration, in order (their
    labels: a site's first name, ["default"] for the one of a file without
    site blocks). With a table made ({!create}), their columns are found
    or named now, in the process that made it (the supervisor, before it
    forks the workers that count by them); else when it is made. A name
    beyond the room made at start counts as ["(other)"] (one warning).
    Allocates. *)

val site_column : int -> int
(** [site_column i] is the column of site [i] of the last {!set_sites};
    [col_other] for an index out of range ([-1]: no site). Does not
    allocate. *)

val col_other : int
val col_status : int

val time_requests : unit -> unit
(** A reader of the totals exists in this process (the stats handler or
    the status listener was made, {!Stats}): requests are timed from now
    on ({!timed}). *)

val timed : unit -> bool
(** [timed ()]: {!Slot.stamp} takes the clock at each request's start for
    the duration histogram, whether or not an access log asked for it,
    and {!Request_metrics} counts by site. Without a reader of the
    totals, no clock is read for them and only the server's totals are
    kept. *)

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

val exchange : t -> int -> col:int -> protocol:int -> status:int -> bytes:int -> body:int -> ns:int -> unit
(** [exchange t row ~col ~protocol ~status ~bytes ~body ~ns] counts the
    response as {!response} does, and in column [col] (a site's,
    {!site_column}): under [protocol] ([0] HTTP/1.0, [1] HTTP/1.1, [2]
    HTTP/2) its status class, its duration [ns] (in the buckets of
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5 and 10 s, and
    above; negative: 0) and its [body] bytes. A status outside 100-599, a
    column or protocol out of range: counted by {!response} only.
    [row < 0]: nothing. Does not allocate. *)

val accepted : t -> int -> unit
(** [accepted t row] counts one connection accepted. Does not allocate. *)

val connections : t -> int -> reading:int -> writing:int -> idle:int -> handling:int -> unit
(** [connections t row ~reading ~writing ~idle ~handling] sets the
    worker's gauges. Does not allocate. *)

type by_protocol = {
  classes : int array;  (** [.(k)]: responses of status [k+1]xx *)
  buckets : int array;  (** per bucket, not cumulative; the last: above 10 s *)
  sum_ns : int;
  sent : int;
}

type site = { site : string; protocols : by_protocol array  (** http1.0, http1.1, h2 *) }

type summary = {
  workers : int;  (** rows whose process runs *)
  by_class : int array;  (** [by_class.(k)]: responses of status [k]xx, [k] in 1..5; [.(0)] unused *)
  bytes_sent : int;
  accepted_connections : int;
  reading : int;
  writing : int;
  idle : int;
  handling : int;
  sites : site list;
      (** the named sites in the order they were named, then ["(status)"]
          and ["(other)"] when they counted something *)
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
    [httpz_connections{state="idle"}], each with its HELP and TYPE; then
    by site, [httpz_requests_total{site="a.example",protocol="h2",code="2xx"}]
    (every class, protocol and site, zeros included),
    [httpz_request_duration_seconds] (a histogram: [_bucket] with [le],
    cumulative, [_sum], [_count]) and [httpz_response_body_bytes_total], by site
    and protocol. The status code is its class, so that the series stay
    bounded: 5 per site and protocol. *)

val text : summary -> string
(** The same as [name value] lines ([responses_2xx 10], …), for a
    shell or a monitoring agent. *)
