open Httpz
open Httpz_server
module B = Bigstring

type decision = Proceed | Send_304 | Send_412

let has_accept_encoding = 1
let has_range = 2
let has_conditional = 4

(* One pass over the names instead of a [Request.find] per field: most
   requests carry none of these, and each find walks every field. *)
let fields req =
  let m = ref 0 in
  for i = 0 to Request.header_count req - 1 do
    match (Request.header_name req i : Header_name.t) with
    | Accept_encoding -> m := !m lor has_accept_encoding
    | Range -> m := !m lor has_range
    | If_match | If_none_match | If_modified_since | If_unmodified_since ->
      m := !m lor has_conditional
    | _ -> ()
  done;
  !m

let any_match req (buf : B.t) (name : Header_name.t) etag ~strong =
  let i = ref (Request.find req name) and matched = ref false in
  while !i >= 0 && not !matched do
    let v = Request.header_value req !i in
    let r =
      if strong then Etag.if_match buf ~off:(Span.off v) ~len:(Span.len v) ~etag
      else Etag.if_none_match buf ~off:(Span.off v) ~len:(Span.len v) ~etag
    in
    (match r with Etag.Match -> matched := true | No_match | Invalid -> ());
    i := Request.find_next req name ~after:!i
  done;
  !matched

let date_field c req (buf : B.t) (name : Header_name.t) =
  let i = Request.find req name in
  if i < 0 then -1
  else
    (* A second line makes the value a list, which is no HTTP-date. *)
    if Request.find_next req name ~after:i >= 0 then -1
    else Date.parse_span buf (Request.header_value req i) ~now:(Ctx.now c)

let preconditions c req buf etag mtime =
  let failed =
    if Request.find req If_match >= 0 then not (any_match req buf If_match etag ~strong:true)
    else begin
      let d = date_field c req buf If_unmodified_since in
      d >= 0 && mtime > d
    end
  in
  if failed then Send_412
  else if Request.find req If_none_match >= 0 then
    (if any_match req buf If_none_match etag ~strong:false then Send_304 else Proceed)
  else begin
    let d = date_field c req buf If_modified_since in
    if d >= 0 && mtime <= d then Send_304 else Proceed
  end

(* If-Range (§13.1.5): honour Range only when the validator still holds. *)
let if_range_holds c req (buf : B.t) etag mtime =
  let i = Request.find req If_range in
  if i < 0 then true
  else begin
    let v = Request.header_value req i in
    match Etag.if_range buf ~off:(Span.off v) ~len:(Span.len v) ~etag with
    | Match -> true
    | No_match -> false
    | Invalid ->
      let d = Date.parse_span buf v ~now:(Ctx.now c) in
      d >= 0 && d = mtime
  end

