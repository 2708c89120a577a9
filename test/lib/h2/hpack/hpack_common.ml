(* Helpers shared by the HPACK test modules. *)

open Httpz
module S = Httpz_test_support
module D = Hpack.Decoder
module E = Hpack.Encoder

let hex s =
  let s = String.concat "" (String.split_on_char ' ' s) in
  String.init (String.length s / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub s (2 * i) 2)))

let to_hex s = String.concat "" (List.map (fun c -> Printf.sprintf "%02x" (Char.code c)) (List.of_seq (String.to_seq s)))

type outcome = Fields of (string * string) list | Failed of D.error

let outcome_to_string = function
  | Fields l -> String.concat "; " (List.map (fun (n, v) -> Printf.sprintf "%S: %S" n v) l)
  | Failed e -> "error " ^ D.error_to_string e

let outcome = Alcotest.testable (fun ppf o -> Format.pp_print_string ppf (outcome_to_string o)) ( = )

(* Decodes [block] held at an offset inside [garbage] bytes, checking the
   per-field contract on the way. *)
let decode ?(garbage = '\r') ?out_size d block =
  let off = 13 in
  let src = S.bigstring_at ~garbage ~off block in
  let out_size = match out_size with Some n -> n | None -> D.default_max_header_list_size in
  let out = Bigstring.create out_size in
  D.start_block d ~off ~len:(String.length block);
  let rec go acc =
    match D.next_field d src ~out with
    | D.Field ->
        let n = D.name d and v = D.value d in
        let stop = Span.off v + Span.len v in
        if Span.off n < 0 || stop > D.output_length d || D.output_length d > out_size then
          Alcotest.failf "field spans outside the output (%d, %d)" stop (D.output_length d);
        let name = Span.to_string out n in
        if D.header_name d <> Header_name.of_string name && D.pseudo d = Hpack.Regular then
          Alcotest.failf "header_name of %S" name;
        go ((name, Span.to_string out v) :: acc)
    | D.End -> Fields (List.rev acc)
    | D.Error -> Failed (D.error d)
  in
  let r = go [] in
  if D.position d < off || D.position d > off + String.length block then
    Alcotest.failf "position %d outside the block" (D.position d);
  r

let entries t = List.init (Hpack.Table.length t) (fun i -> Hpack.Table.entry t (i + 1))

let table_contents d = (entries (D.table d), Hpack.Table.size (D.table d))

let table_t = Alcotest.(pair (list (pair string string)) int)

let encode_with f =
  let b = Bigstring.create 512 in
  let o = f b in
  Bigstring.sub_string b ~off:0 ~len:o


(* Field names and values as a server sees them: static-table names and
   values, every known name, random tokens; printable, Latin-1 and tab
   bytes in values (never NUL, CR or LF, which the encoder refuses). *)
let gen_name =
  let open QCheck2.Gen in
  let token = string_size ~gen:(oneofl (List.of_seq (String.to_seq "abcdefghijklmnopqrstuvwxyz0123456789-_"))) (int_range 1 20) in
  oneof
    [ oneofl [ ":method"; ":path"; ":scheme"; ":authority"; ":status"; "content-type"; "server";
               "cache-control"; "date"; "set-cookie"; "accept-encoding"; "custom-key"; "x-request-id";
               "cookie"; "user-agent"; "etag" ];
      map (fun n -> String.lowercase_ascii (Header_name.to_string n)) (oneofa Header_name.all);
      token ]

let gen_value =
  let open QCheck2.Gen in
  let byte = map Char.chr (oneof [ int_range 32 126; int_range 32 126; int_range 128 255; return 9 ]) in
  oneof
    [ oneofl [ ""; "GET"; "/"; "/index.html"; "https"; "200"; "404"; "gzip, deflate"; "text/html";
               "no-cache"; "httpz"; "Mon, 21 Oct 2013 20:13:21 GMT" ];
      string_size ~gen:byte (int_range 0 40);
      string_size ~gen:byte (int_range 100 400) ]

