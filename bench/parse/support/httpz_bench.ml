external now_ns : unit -> (int[@untagged])
  = "httpz_bench_now_ns_byte" "httpz_bench_now_ns"
  [@@noalloc]

type json =
  | Null
  | Bool of bool
  | Int of int
  | Float of float
  | String of string
  | List of json list
  | Obj of (string * json) list

let escape s =
  let b = Buffer.create (String.length s + 2) in
  Buffer.add_char b '"';
  String.iter
    (fun c ->
      match c with
      | '"' -> Buffer.add_string b "\\\""
      | '\\' -> Buffer.add_string b "\\\\"
      | '\n' -> Buffer.add_string b "\\n"
      | '\r' -> Buffer.add_string b "\\r"
      | '\t' -> Buffer.add_string b "\\t"
      | c when Char.code c < 0x20 -> Printf.bprintf b "\\u%04x" (Char.code c)
      | c -> Buffer.add_char b c)
    s;
  Buffer.add_char b '"';
  Buffer.contents b

let float_text f =
  match classify_float f with
  | FP_nan | FP_infinite -> "null"
  | _ ->
      (* Enough digits for ns/op and words/op; %.6g never prints a bare
         trailing dot, so the text is always a JSON number. *)
      let s = Printf.sprintf "%.6g" f in
      if String.contains s '.' || String.contains s 'e' then s else s ^ ".0"

let is_scalar = function List _ | Obj _ -> false | _ -> true

let to_string j =
  let b = Buffer.create 4096 in
  let rec go ind j =
    match j with
    | Null -> Buffer.add_string b "null"
    | Bool x -> Buffer.add_string b (string_of_bool x)
    | Int i -> Buffer.add_string b (string_of_int i)
    | Float f -> Buffer.add_string b (float_text f)
    | String s -> Buffer.add_string b (escape s)
    | List l ->
        let flat = List.for_all is_scalar l in
        Buffer.add_char b '[';
        List.iteri
          (fun i x ->
            if i > 0 then Buffer.add_string b (if flat then ", " else ",");
            if not flat then (Buffer.add_char b '\n'; Buffer.add_string b (ind ^ "  "));
            go (ind ^ "  ") x)
          l;
        if not flat && l <> [] then (Buffer.add_char b '\n'; Buffer.add_string b ind);
        Buffer.add_char b ']'
    | Obj kv ->
        let flat = List.for_all (fun (_, v) -> is_scalar v) kv in
        Buffer.add_char b '{';
        List.iteri
          (fun i (k, v) ->
            if i > 0 then Buffer.add_string b (if flat then ", " else ",");
            if not flat then (Buffer.add_char b '\n'; Buffer.add_string b (ind ^ "  "));
            Buffer.add_string b (escape k);
            Buffer.add_string b ": ";
            go (ind ^ "  ") v)
          kv;
        if not flat && kv <> [] then (Buffer.add_char b '\n'; Buffer.add_string b ind);
        Buffer.add_char b '}'
  in
  go "" j;
  Buffer.contents b

let float_or_null = function Some f -> Float f | None -> Null

let read_file path =
  let ic = open_in_bin path in
  Fun.protect
    ~finally:(fun () -> close_in ic)
    (fun () -> really_input_string ic (in_channel_length ic))

let read_line_opt path =
  match open_in path with
  | exception Sys_error _ -> None
  | ic ->
      Fun.protect
        ~finally:(fun () -> close_in ic)
        (fun () -> try Some (input_line ic) with End_of_file -> None)

(* First line of a command's output; None when it fails or prints nothing. *)
let command_line cmd =
  match Unix.open_process_in (cmd ^ " 2>/dev/null") with
  | exception Unix.Unix_error _ -> None
  | ic ->
      let l = try Some (String.trim (input_line ic)) with End_of_file -> None in
      let st = Unix.close_process_in ic in
      (match (st, l) with Unix.WEXITED 0, Some s when s <> "" -> Some s | _ -> None)

let loadavg () =
  match read_line_opt "/proc/loadavg" with
  | None -> None
  | Some l -> (
      match String.index_opt l ' ' with
      | Some i -> float_of_string_opt (String.sub l 0 i)
      | None -> None)

(* Lines "key<TAB>: value" of a /proc file. *)
let proc_field path key =
  match open_in path with
  | exception Sys_error _ -> None
  | ic ->
      Fun.protect
        ~finally:(fun () -> close_in ic)
        (fun () ->
          let rec loop () =
            match input_line ic with
            | exception End_of_file -> None
            | l -> (
                match String.index_opt l ':' with
                | Some i when String.trim (String.sub l 0 i) = key ->
                    Some (String.trim (String.sub l (i + 1) (String.length l - i - 1)))
                | _ -> loop ())
          in
          loop ())

let machine ~loadavg_start =
  let allowed = proc_field "/proc/self/status" "Cpus_allowed_list" in
  let pinned =
    match allowed with
    | Some s -> (match int_of_string_opt s with Some n -> Int n | None -> Null)
    | None -> Null
  in
  let opt = function Some s -> String s | None -> Null in
  let commit = command_line "git rev-parse HEAD" in
  let dirty =
    match commit with
    | None -> Null
    | Some _ -> (
        match command_line "git status --porcelain --untracked-files=no | head -1" with
        | Some _ -> Bool true
        | None -> Bool false)
  in
  Obj
    [
      ("uname", opt (command_line "uname -a"));
      ("nproc", match command_line "nproc --all" with
                | Some s -> (match int_of_string_opt s with Some n -> Int n | None -> Null)
                | None -> Null);
      ("cpu", opt (proc_field "/proc/cpuinfo" "model name"));
      ("commit", opt commit);
      ("dirty", dirty);
      ("ocaml", String Sys.ocaml_version);
      ("pinned_cpu", pinned);
      ("cpus_allowed", opt allowed);
      ("governor", opt (read_line_opt "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
      ("date", opt (command_line "date -u +%Y-%m-%dT%H:%M:%SZ"));
      ("loadavg_start", float_or_null loadavg_start);
      ("loadavg_end", float_or_null (loadavg ()));
    ]

let requests = [ "small"; "medium"; "large"; "headers50" ]

let corpus_dir () =
  let rec up dir n =
    let cand = Filename.concat dir "bench/requests" in
    if Sys.file_exists (Filename.concat cand "medium.http") then Some cand
    else if n = 0 then None
    else up (Filename.dirname dir) (n - 1)
  in
  let exe_dir =
    let e = Sys.executable_name in
    if Filename.is_relative e then Filename.concat (Sys.getcwd ()) (Filename.dirname e)
    else Filename.dirname e
  in
  match up (Sys.getcwd ()) 8 with
  | Some d -> d
  | None -> (
      match up exe_dir 8 with
      | Some d -> d
      | None -> failwith "bench/requests not found above the current or the executable's directory")

let median a =
  let n = Array.length a in
  if n = 0 then invalid_arg "median: empty";
  let s = Array.copy a in
  Array.sort compare s;
  if n land 1 = 1 then s.(n / 2) else (s.((n / 2) - 1) +. s.(n / 2)) /. 2.

let percentile sorted n p =
  if n <= 0 then invalid_arg "percentile: empty";
  (* Nearest rank: the smallest value with at least p% of samples <= it. *)
  let rank = int_of_float (ceil (p /. 100. *. float_of_int n)) in
  let i = max 0 (min (n - 1) (rank - 1)) in
  sorted.(i)
