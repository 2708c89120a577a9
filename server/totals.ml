open Httpz

(* Words of a row: the totals of old, then one block per site column. *)
let w_pid = 0
let w_class = 1 (* .. 5: 1xx .. 5xx *)
let w_bytes = 6
let w_accepted = 7
let w_reading = 8
let w_writing = 9
let w_idle = 10
let w_handling = 11
let head_words = 16

(* Request durations: the upper bounds of the histogram's buckets, in ns
   (Prometheus's default buckets). A duration above the last falls in one
   more bucket, counted only in +Inf. *)
let bounds_ns =
  [| 5_000_000; 10_000_000; 25_000_000; 50_000_000; 100_000_000; 250_000_000; 500_000_000;
     1_000_000_000; 2_500_000_000; 5_000_000_000; 10_000_000_000 |]
let bucket_names = [| "0.005"; "0.01"; "0.025"; "0.05"; "0.1"; "0.25"; "0.5"; "1"; "2.5"; "5"; "10" |]
let nbuckets = Array.length bounds_ns + 1

(* One block per site column and protocol: 5 status classes, the buckets
   (not cumulative), the sum of durations in ns, the bytes sent. *)
let b_class = 0
let b_bucket = 5
let b_sum = b_bucket + nbuckets
let b_bytes = b_sum + 1
let block_words = b_bytes + 1
let protocols = [| "http1.0"; "http1.1"; "h2" |]
let nprotocols = Array.length protocols
let column_words = nprotocols * block_words

(* Columns 0 and 1 are no site's; the sites' start at 2. *)
let col_other = 0
let col_status = 1
let first_site = 2

(* Site names: a word of their count, then a slot of [name_bytes] each
   (its length in the first word). *)
let name_bytes = 256
let max_name = name_bytes - 8

type t = { mem : Bigstring.t; rows : int; cols : int; names_off : int; rows_off : int; row_bytes : int }

(* What the process serves: the site names of its configuration, and
   where each one counts in the table of this process. Set before the
   workers fork, read by them. *)
let pending = ref [| "default" |]
let table = ref None
let columns = ref [||]
let timing = ref false

let[@inline] off t row word = t.rows_off + (row * t.row_bytes) + (8 * word)
let[@inline] get t row word = Int64.to_int (Bigstring.unsafe_get64 t.mem (off t row word))
let[@inline] set t row word v = Bigstring.unsafe_set64 t.mem (off t row word) (Int64.of_int v)
let[@inline] add t row word n = set t row word (get t row word + n)

let named t = Int64.to_int (Bigstring.unsafe_get64 t.mem 0)

let name t col =
  if col = col_other then "(other)"
  else if col = col_status then "(status)"
  else
    let o = t.names_off + ((col - first_site) * name_bytes) in
    let n = Int64.to_int (Bigstring.unsafe_get64 t.mem o) in
    String.init n (fun i -> Bigstring.unsafe_get t.mem (o + 8 + i))

(* The column of site [n]: the one of that name, else a new one, else
   [col_other] (the room made at start is used up). Only the process that
   made the table (the supervisor) names columns. *)
let column t n =
  let n = if String.length n > max_name then String.sub n 0 max_name else n in
  let k = named t in
  let rec find c = if c >= first_site + k then -1 else if name t c = n then c else find (c + 1) in
  match find first_site with
  | c when c >= 0 -> c
  | _ when first_site + k >= t.cols ->
      Log.warn "status totals: no room left for site %s (counted as \"(other)\"; a restart makes room)" n;
      col_other
  | _ ->
      let o = t.names_off + (k * name_bytes) in
      Bigstring.unsafe_set64 t.mem o (Int64.of_int (String.length n));
      String.iteri (fun i ch -> Bigstring.unsafe_set t.mem (o + 8 + i) ch) n;
      (* The name is written before it is counted: a reader never sees a
         column without its name. *)
      ignore (Mapped.cas64 t.mem 0 k (k + 1) : int);
      first_site + k

let assign t = columns := Array.map (column t) !pending

let create ~rows =
  let rows = max 1 rows in
  let sites = Array.length !pending in
  let cols = first_site + sites + max 8 sites in
  let names_off = 8 in
  let rows_off = names_off + ((cols - first_site) * name_bytes) in
  let row_bytes = 8 * (head_words + (cols * column_words)) in
  let t = { mem = Mapped.map_shared (rows_off + (rows * row_bytes)); rows; cols; names_off; rows_off; row_bytes } in
  table := Some t;
  assign t;
  t

let set_sites names =
  pending := (if names = [||] then [| "default" |] else Array.copy names);
  match !table with Some t -> assign t | None -> ()

let site_column i = if i >= 0 && i < Array.length !columns then Array.unsafe_get !columns i else col_other
let timed () = !timing
let time_requests () = timing := true

let rows_for ~workers = (4 * max 1 workers) + 4

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
      else if (pid = 0 || not (running pid)) && Mapped.cas64 t.mem (off t row w_pid) pid me = 1 then begin
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
    if k >= 1 && k <= 5 then add t row (w_class + k - 1) 1;
    add t row w_bytes bytes
  end

let[@inline] block col protocol = head_words + (col * column_words) + (protocol * block_words)

let bucket ns =
  let i = ref 0 in
  while !i < nbuckets - 1 && ns > Array.unsafe_get bounds_ns !i do incr i done;
  !i

let[@inline] bump mem o n = Bigstring.unsafe_set64 mem o (Int64.add (Bigstring.unsafe_get64 mem o) (Int64.of_int n))

let exchange t row ~col ~protocol ~status ~bytes ~body ~ns =
  if row >= 0 then begin
    (* The row's and the block's offsets once: each word below is one
       load and one store. *)
    let r = off t row 0 and mem = t.mem in
    let k = status / 100 in
    bump mem (r + (8 * w_bytes)) bytes;
    if k >= 1 && k <= 5 then begin
      bump mem (r + (8 * (w_class + k - 1))) 1;
      if col >= 0 && col < t.cols && protocol >= 0 && protocol < nprotocols then begin
        let b = r + (8 * block col protocol) in
        let ns = if ns > 0 then ns else 0 in
        bump mem (b + (8 * (b_class + k - 1))) 1;
        bump mem (b + (8 * (b_bucket + bucket ns))) 1;
        bump mem (b + (8 * b_sum)) ns;
        bump mem (b + (8 * b_bytes)) body
      end
    end
  end

let accepted t row = if row >= 0 then add t row w_accepted 1

let connections t row ~reading ~writing ~idle ~handling =
  if row >= 0 then begin
    set t row w_reading reading;
    set t row w_writing writing;
    set t row w_idle idle;
    set t row w_handling handling
  end

type by_protocol = {
  classes : int array;
  buckets : int array;
  sum_ns : int;
  sent : int;
}

type site = { site : string; protocols : by_protocol array }

type summary = {
  workers : int;
  by_class : int array;
  bytes_sent : int;
  accepted_connections : int;
  reading : int;
  writing : int;
  idle : int;
  handling : int;
  sites : site list;
}

let site_summary t col live =
  let protocols =
    Array.init nprotocols (fun p ->
        let b = block col p in
        let sum w = List.fold_left (fun a row -> a + get t row (b + w)) 0 live in
        { classes = Array.init 5 (fun k -> sum (b_class + k)); buckets = Array.init nbuckets (fun i -> sum (b_bucket + i));
          sum_ns = sum b_sum; sent = sum b_bytes })
  in
  { site = name t col; protocols }

let requests_of s = Array.fold_left (fun a p -> a + Array.fold_left ( + ) 0 p.classes) 0 s.protocols

let summary t =
  let by_class = Array.make 6 0 in
  let workers = ref 0 and bytes = ref 0 and acc = ref 0 in
  let reading = ref 0 and writing = ref 0 and idle = ref 0 and handling = ref 0 in
  let counted = ref [] in
  for row = 0 to t.rows - 1 do
    let pid = get t row w_pid in
    if pid <> 0 then begin
      counted := row :: !counted;
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
  (* The sites in the order they were named; "(other)" and "(status)"
     only once they counted something. *)
  let named = List.init (min (named t) (t.cols - first_site)) (fun k -> site_summary t (first_site + k) !counted) in
  let extra =
    List.filter (fun s -> requests_of s > 0) [ site_summary t col_status !counted; site_summary t col_other !counted ]
  in
  { workers = !workers; by_class; bytes_sent = !bytes; accepted_connections = !acc; reading = !reading;
    writing = !writing; idle = !idle; handling = !handling; sites = named @ extra }

let total s = Array.fold_left ( + ) 0 s.by_class

let json s =
  Printf.sprintf
    "{\"workers\": %d, \"responses\": {\"1xx\": %d, \"2xx\": %d, \"3xx\": %d, \"4xx\": %d, \"5xx\": %d}, \
     \"responses_total\": %d, \"bytes_sent\": %d, \"connections_accepted\": %d, \
     \"connections\": {\"reading\": %d, \"writing\": %d, \"idle\": %d, \"handling\": %d}}"
    s.workers s.by_class.(1) s.by_class.(2) s.by_class.(3) s.by_class.(4) s.by_class.(5) (total s)
    s.bytes_sent s.accepted_connections s.reading s.writing s.idle s.handling

(* A label value: backslash, double quote and line feed escaped, as the
   format asks. *)
let label v =
  let b = Buffer.create (String.length v) in
  String.iter
    (function '\\' -> Buffer.add_string b "\\\\" | '"' -> Buffer.add_string b "\\\"" | '\n' -> Buffer.add_string b "\\n"
      | ch -> Buffer.add_char b ch)
    v;
  Buffer.contents b

let seconds ns = Printf.sprintf "%d.%09d" (ns / 1_000_000_000) (ns mod 1_000_000_000)

(* The Prometheus text exposition format (version 0.0.4): one family per
   quantity, HELP and TYPE lines, counters suffixed _total. *)
let prometheus s =
  let b = Buffer.create 4096 in
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
  let each f = List.iter (fun st -> Array.iteri (fun p bp -> f (label st.site) protocols.(p) bp) st.protocols) s.sites in
  family "httpz_requests_total" "counter"
    "Requests answered, by site (its first name in the configuration file), protocol and status class.";
  each (fun site proto bp ->
      Array.iteri
        (fun k n -> Printf.bprintf b "httpz_requests_total{site=\"%s\",protocol=\"%s\",code=\"%dxx\"} %d\n" site proto (k + 1) n)
        bp.classes);
  family "httpz_request_duration_seconds" "histogram"
    "Time from the request's first byte read to its response's last byte handed to the kernel.";
  each (fun site proto bp ->
      let cum = ref 0 in
      Array.iteri
        (fun i n ->
          cum := !cum + n;
          if i < Array.length bucket_names then
            Printf.bprintf b "httpz_request_duration_seconds_bucket{site=\"%s\",protocol=\"%s\",le=\"%s\"} %d\n" site proto
              bucket_names.(i) !cum)
        bp.buckets;
      Printf.bprintf b "httpz_request_duration_seconds_bucket{site=\"%s\",protocol=\"%s\",le=\"+Inf\"} %d\n" site proto !cum;
      Printf.bprintf b "httpz_request_duration_seconds_sum{site=\"%s\",protocol=\"%s\"} %s\n" site proto (seconds bp.sum_ns);
      Printf.bprintf b "httpz_request_duration_seconds_count{site=\"%s\",protocol=\"%s\"} %d\n" site proto !cum);
  family "httpz_response_body_bytes_total" "counter" "Bytes of response bodies handed to the kernel, by site and protocol.";
  each (fun site proto bp ->
      Printf.bprintf b "httpz_response_body_bytes_total{site=\"%s\",protocol=\"%s\"} %d\n" site proto bp.sent);
  Buffer.contents b

let text s =
  Printf.sprintf
    "workers %d\nresponses_1xx %d\nresponses_2xx %d\nresponses_3xx %d\nresponses_4xx %d\nresponses_5xx %d\n\
     responses_total %d\nbytes_sent %d\nconnections_accepted %d\nconnections_reading %d\n\
     connections_writing %d\nconnections_idle %d\nconnections_handling %d\n"
    s.workers s.by_class.(1) s.by_class.(2) s.by_class.(3) s.by_class.(4) s.by_class.(5) (total s)
    s.bytes_sent s.accepted_connections s.reading s.writing s.idle s.handling
