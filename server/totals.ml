open Httpz

(* Words of a row. *)
let w_pid = 0
let w_class = 1 (* .. 5: 1xx .. 5xx *)
let w_bytes = 6
let w_accepted = 7
let w_reading = 8
let w_writing = 9
let w_idle = 10
let w_handling = 11
let row_bytes = 128

type t = { mem : Bigstring.t; rows : int }

let create ~rows =
  let rows = max 1 rows in
  { mem = Mapped.map_shared (rows * row_bytes); rows }

let rows_for ~workers = (4 * max 1 workers) + 4

let[@inline] off row word = (row * row_bytes) + (8 * word)
let[@inline] get t row word = Int64.to_int (Bigstring.unsafe_get64 t.mem (off row word))
let[@inline] set t row word v = Bigstring.unsafe_set64 t.mem (off row word) (Int64.of_int v)

let running pid =
  pid > 0 && match Unix.kill pid 0 with () -> true | exception Unix.Unix_error (Unix.ESRCH, _, _) -> false | exception _ -> true

let zero_gauges t row = List.iter (fun w -> set t row w 0) [ w_reading; w_writing; w_idle; w_handling ]

let claim t =
  let me = Unix.getpid () in
  let rec go row =
    if row >= t.rows then -1
    else
      let pid = get t row w_pid in
      if pid = me then row
      else if (pid = 0 || not (running pid)) && Mapped.cas64 t.mem (off row w_pid) pid me = 1 then begin
        zero_gauges t row;
        row
      end
      else go (row + 1)
  in
  go 0

let release t row = if row >= 0 then zero_gauges t row

let response t row ~status ~bytes =
  if row >= 0 then begin
    let k = status / 100 in
    if k >= 1 && k <= 5 then set t row (w_class + k - 1) (get t row (w_class + k - 1) + 1);
    set t row w_bytes (get t row w_bytes + bytes)
  end

let accepted t row = if row >= 0 then set t row w_accepted (get t row w_accepted + 1)

let connections t row ~reading ~writing ~idle ~handling =
  if row >= 0 then begin
    set t row w_reading reading;
    set t row w_writing writing;
    set t row w_idle idle;
    set t row w_handling handling
  end

type summary = {
  workers : int;
  by_class : int array;
  bytes_sent : int;
  accepted_connections : int;
  reading : int;
  writing : int;
  idle : int;
  handling : int;
}

let summary t =
  let by_class = Array.make 6 0 in
  let workers = ref 0 and bytes = ref 0 and acc = ref 0 in
  let reading = ref 0 and writing = ref 0 and idle = ref 0 and handling = ref 0 in
  for row = 0 to t.rows - 1 do
    let pid = get t row w_pid in
    if pid <> 0 then begin
      for k = 1 to 5 do by_class.(k) <- by_class.(k) + get t row (w_class + k - 1) done;
      bytes := !bytes + get t row w_bytes;
      acc := !acc + get t row w_accepted;
      if running pid then begin
        incr workers;
        reading := !reading + get t row w_reading;
        writing := !writing + get t row w_writing;
        idle := !idle + get t row w_idle;
        handling := !handling + get t row w_handling
      end
    end
  done;
  { workers = !workers; by_class; bytes_sent = !bytes; accepted_connections = !acc; reading = !reading;
    writing = !writing; idle = !idle; handling = !handling }

let total s = Array.fold_left ( + ) 0 s.by_class

let json s =
  Printf.sprintf
    "{\"workers\": %d, \"responses\": {\"1xx\": %d, \"2xx\": %d, \"3xx\": %d, \"4xx\": %d, \"5xx\": %d}, \
     \"responses_total\": %d, \"bytes_sent\": %d, \"connections_accepted\": %d, \
     \"connections\": {\"reading\": %d, \"writing\": %d, \"idle\": %d, \"handling\": %d}}"
    s.workers s.by_class.(1) s.by_class.(2) s.by_class.(3) s.by_class.(4) s.by_class.(5) (total s)
    s.bytes_sent s.accepted_connections s.reading s.writing s.idle s.handling

(* The Prometheus text exposition format (version 0.0.4): one family per
   quantity, HELP and TYPE lines, counters suffixed _total. *)
let prometheus s =
  let b = Buffer.create 1024 in
  let family name kind help = Printf.bprintf b "# HELP %s %s\n# TYPE %s %s\n" name help name kind in
  family "httpz_workers" "gauge" "Worker processes running.";
  Printf.bprintf b "httpz_workers %d\n" s.workers;
  family "httpz_responses_total" "counter" "Responses sent, by status class, over the server's life.";
  for k = 1 to 5 do Printf.bprintf b "httpz_responses_total{class=\"%dxx\"} %d\n" k s.by_class.(k) done;
  family "httpz_sent_bytes_total" "counter" "Bytes of responses handed to the kernel.";
  Printf.bprintf b "httpz_sent_bytes_total %d\n" s.bytes_sent;
  family "httpz_connections_accepted_total" "counter" "Connections accepted.";
  Printf.bprintf b "httpz_connections_accepted_total %d\n" s.accepted_connections;
  family "httpz_connections" "gauge" "Open connections by state (each worker's, written once a second).";
  List.iter
    (fun (st, n) -> Printf.bprintf b "httpz_connections{state=\"%s\"} %d\n" st n)
    [ ("reading", s.reading); ("writing", s.writing); ("idle", s.idle); ("handling", s.handling) ];
  Buffer.contents b

let text s =
  Printf.sprintf
    "workers %d\nresponses_1xx %d\nresponses_2xx %d\nresponses_3xx %d\nresponses_4xx %d\nresponses_5xx %d\n\
     responses_total %d\nbytes_sent %d\nconnections_accepted %d\nconnections_reading %d\n\
     connections_writing %d\nconnections_idle %d\nconnections_handling %d\n"
    s.workers s.by_class.(1) s.by_class.(2) s.by_class.(3) s.by_class.(4) s.by_class.(5) (total s)
    s.bytes_sent s.accepted_connections s.reading s.writing s.idle s.handling
