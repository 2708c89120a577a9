(* --- A JSON reader for the oracle's answers: objects, arrays, strings,
   numbers, booleans and null; enough for what h11_oracle.py prints. *)
type json =
  | Null
  | Bool of bool
  | Num of int
  | Str of string
  | Arr of json list
  | Obj of (string * json) list

exception Bad_json of string

let parse_json s =
  let n = String.length s in
  let pos = ref 0 in
  let fail what = raise (Bad_json (Printf.sprintf "%s at %d in %S" what !pos s)) in
  let peek () = if !pos < n then s.[!pos] else '\000' in
  let skip_ws () = while !pos < n && (s.[!pos] = ' ' || s.[!pos] = '\n') do incr pos done in
  let expect c = skip_ws (); if peek () <> c then fail (Printf.sprintf "expected %c" c); incr pos in
  let lit w v =
    if !pos + String.length w <= n && String.sub s !pos (String.length w) = w then begin
      pos := !pos + String.length w; v end
    else fail "bad literal"
  in
  let rec value () =
    skip_ws ();
    match peek () with
    | '{' ->
      incr pos; skip_ws ();
      if peek () = '}' then (incr pos; Obj [])
      else begin
        let rec members acc =
          let k = match value () with Str k -> k | _ -> fail "key" in
          expect ':';
          let v = value () in
          skip_ws ();
          match peek () with
          | ',' -> incr pos; members ((k, v) :: acc)
          | '}' -> incr pos; Obj (List.rev ((k, v) :: acc))
          | _ -> fail "object"
        in
        members []
      end
    | '[' ->
      incr pos; skip_ws ();
      if peek () = ']' then (incr pos; Arr [])
      else begin
        let rec elems acc =
          let v = value () in
          skip_ws ();
          match peek () with
          | ',' -> incr pos; elems (v :: acc)
          | ']' -> incr pos; Arr (List.rev (v :: acc))
          | _ -> fail "array"
        in
        elems []
      end
    | '"' ->
      incr pos;
      let b = Buffer.create 16 in
      let fin = ref false in
      while not !fin do
        if !pos >= n then fail "string";
        (match s.[!pos] with
         | '"' -> fin := true
         | '\\' ->
           incr pos;
           (match peek () with
            | 'n' -> Buffer.add_char b '\n'
            | 'r' -> Buffer.add_char b '\r'
            | 't' -> Buffer.add_char b '\t'
            | 'b' -> Buffer.add_char b '\b'
            | 'f' -> Buffer.add_char b '\012'
            | '/' | '\\' | '"' as c -> Buffer.add_char b c
            | 'u' ->
              if !pos + 4 >= n then fail "\\u";
              let code = int_of_string ("0x" ^ String.sub s (!pos + 1) 4) in
              (* The oracle sends latin-1 text, so every code point is a
                 byte; error messages may hold others: keep them as '?'. *)
              Buffer.add_char b (if code < 256 then Char.chr code else '?');
              pos := !pos + 4
            | _ -> fail "escape")
         | c -> Buffer.add_char b c);
        incr pos
      done;
      Str (Buffer.contents b)
    | 't' -> lit "true" (Bool true)
    | 'f' -> lit "false" (Bool false)
    | 'n' -> lit "null" Null
    | '-' | '0' .. '9' ->
      let st = !pos in
      incr pos;
      while !pos < n && s.[!pos] >= '0' && s.[!pos] <= '9' do incr pos done;
      Num (int_of_string (String.sub s st (!pos - st)))
    | _ -> fail "value"
  in
  let v = value () in
  skip_ws ();
  if !pos <> n then fail "trailing bytes";
  v

let member k = function
  | Obj l -> (try List.assoc k l with Not_found -> raise (Bad_json ("no member " ^ k)))
  | _ -> raise (Bad_json "not an object")

let str = function Str s -> s | _ -> raise (Bad_json "not a string")
let bool = function Bool b -> b | _ -> raise (Bad_json "not a bool")

let version_of s =
  (* h11 matches HTTP/DIGIT.DIGIT, so "M.m" is three bytes. *)
  if String.length s = 3 && s.[1] = '.' then (Char.code s.[0] - 48, Char.code s.[2] - 48)
  else raise (Bad_json ("version " ^ s))

let result_of_json j : Impl.result =
  match str (member "v" j) with
  | "partial" -> Partial
  | "reject" -> Reject (str (member "why" j))
  | "accept" ->
    let headers =
      match member "headers" j with
      | Arr l -> List.map (function Arr [ n; v ] -> (str n, str v) | _ -> raise (Bad_json "header")) l
      | _ -> raise (Bad_json "headers")
    in
    Accept
      { meth = str (member "method" j);
        target = str (member "target" j);
        version = version_of (str (member "version" j));
        headers;
        content_length =
          (match member "content_length" j with
           | Null -> None
           | v -> Some (Impl.canonical_decimal (str v)));
        chunked = bool (member "chunked" j);
        keep_alive = bool (member "keep_alive" j);
        head_length = (match member "head_length" j with Num n -> n | _ -> raise (Bad_json "head_length")) }
  | "crash" -> failwith ("h11 oracle: h11 raised " ^ str (member "why" j))
  | v -> raise (Bad_json ("verdict " ^ v))

(* --- The subprocess ------------------------------------------------------ *)

type t = { pid : int; to_child : out_channel; from_child : in_channel }

let can_import py =
  Sys.command (Filename.quote_command py [ "-c"; "import h11" ] ~stdout:"/dev/null" ~stderr:"/dev/null") = 0

let interpreters () =
  (match Sys.getenv_opt "HTTPZ_PYTHON" with Some p -> [ p ] | None -> [])
  @ [ "/usr/bin/python3"; "python3" ]

let send t s =
  let n = String.length s in
  let hdr = Bytes.create 4 in
  Bytes.set_int32_be hdr 0 (Int32.of_int n);
  output_bytes t.to_child hdr;
  output_string t.to_child s

let receive t =
  match input_line t.from_child with
  | line -> (
      try result_of_json (parse_json line)
      with Bad_json m -> failwith ("h11 oracle: unreadable answer: " ^ m))
  | exception End_of_file -> failwith "h11 oracle: the python process died"

(* The child answers each input as soon as it has read it, so while we are
   still writing a batch its answers pile up in its stdout pipe. Bounding a
   batch's bytes keeps those answers (at most ~6 bytes of JSON per input
   byte, plus the keys) under the 64 KiB pipe buffer: the child never blocks
   on a full pipe while we block writing to it. A single input larger than
   that is safe alone: the child reads all of it before answering. *)
let max_batch_bytes = 6 * 1024
let max_batch_inputs = 48

let batch t inputs =
  let n = Array.length inputs in
  let out = Array.make n Impl.Partial in
  let i = ref 0 in
  while !i < n do
    let first = !i in
    let bytes = ref 0 in
    while
      !i < n
      && (!i = first
          || (!i - first < max_batch_inputs && !bytes + String.length inputs.(!i) <= max_batch_bytes))
    do
      bytes := !bytes + String.length inputs.(!i);
      send t inputs.(!i);
      incr i
    done;
    flush t.to_child;
    for j = first to !i - 1 do out.(j) <- receive t done
  done;
  out

let check t s = (batch t [| s |]).(0)

let start () =
  match List.find_opt can_import (interpreters ()) with
  | None ->
    Error
      "no python3 can import h11: install Debian's python3-h11 (scripts/deps.sh test), \
       or point HTTPZ_PYTHON at an interpreter that has h11"
  | Some py ->
    (* A file rather than [-c]: tracebacks then name lines, and ps stays short. *)
    let script = Filename.temp_file "httpz_h11_oracle" ".py" in
    let oc = open_out_bin script in
    output_string oc H11_script.source;
    close_out oc;
    let child_in, to_child = Unix.pipe ~cloexec:true () in
    let from_child, child_out = Unix.pipe ~cloexec:true () in
    let pid = Unix.create_process py [| py; script |] child_in child_out Unix.stderr in
    Unix.close child_in;
    Unix.close child_out;
    let t = { pid; to_child = Unix.out_channel_of_descr to_child;
              from_child = Unix.in_channel_of_descr from_child } in
    (* Once it has answered, Python has read the script: remove it now, so
       an interrupted run leaves nothing behind. *)
    let ready = match check t "GET" with Impl.Partial -> true | _ | (exception Failure _) -> false in
    (try Sys.remove script with Sys_error _ -> ());
    if ready then Ok t
    else begin
      (try Unix.kill pid Sys.sigterm with Unix.Unix_error _ -> ());
      ignore (Unix.waitpid [] pid : int * Unix.process_status);
      Error ("the h11 oracle started with " ^ py ^ " does not answer")
    end

let stop t =
  (try
     output_string t.to_child "\xff\xff\xff\xff";
     close_out t.to_child
   with Sys_error _ -> ());
  (try close_in t.from_child with Sys_error _ -> ());
  ignore (Unix.waitpid [] t.pid : int * Unix.process_status)
