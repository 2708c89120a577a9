(* Runs Httpz.Multipart over a body cut into pieces and collects what it
   reports (allocates: for tests only). *)
open Httpz

type part = {
  disposition : string;
  name : string;
  filename : string option;
  content_type : string;
  data : string;
}

let span_str t s = Span.to_string (Multipart.header_buffer t) s

(* [cuts]: the piece boundaries, increasing offsets inside [body]. Each
   piece is copied into a fresh buffer that is scribbled over once it has
   been consumed, so a parser keeping a span into a past piece is caught. *)
let run ?limits ?(boundary = "b0undary") ?(cuts = []) body =
  let t = Multipart.create ?limits () in
  if not (Multipart.reset_string t boundary) then Error Multipart.No_boundary
  else begin
    let parts = ref [] and cur = ref None and data = Buffer.create 64 in
    let n = String.length body in
    let cuts = List.filter (fun c -> c > 0 && c < n) cuts @ [ n ] in
    let result = ref None in
    let rec pump () =
      match Multipart.next t with
      | Multipart.Part ->
          let hb = Multipart.header_buffer t in
          ignore hb;
          cur :=
            Some
              {
                disposition = span_str t (Multipart.disposition t);
                name = span_str t (Multipart.name t);
                filename = (if Multipart.has_filename t then Some (span_str t (Multipart.filename t)) else None);
                content_type = span_str t (Multipart.content_type t);
                data = "";
              };
          Buffer.clear data;
          pump ()
      | Multipart.Data ->
          let s = Multipart.data t in
          assert (Span.len s > 0);
          Buffer.add_string data (Span.to_string (Multipart.data_buffer t) s);
          pump ()
      | Multipart.Part_end ->
          (match !cur with
           | Some p -> parts := { p with data = Buffer.contents data } :: !parts
           | None -> failwith "Part_end without Part");
          cur := None;
          pump ()
      | Multipart.End -> result := Some (Ok (List.rev !parts)); `Stop
      | Multipart.Error -> result := Some (Error (Multipart.error t)); `Stop
      | Multipart.Await -> `More
    in
    let prev = ref 0 in
    let rec go = function
      | [] -> (
          Multipart.finish t;
          match pump () with `Stop -> () | `More -> failwith "Await after finish")
      | c :: rest ->
          let len = c - !prev in
          let piece = Bigstring.of_string (String.sub body !prev len) in
          Multipart.feed t piece ~off:0 ~len;
          prev := c;
          (match pump () with
           | `Stop -> ()
           | `More ->
               Bigarray.Array1.fill piece '\xAA';
               go rest)
    in
    (match pump () with `Stop -> () | `More -> go cuts);
    match !result with Some r -> r | None -> assert false
  end
