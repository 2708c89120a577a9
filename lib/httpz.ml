(* httpz's modules under one name. Each is an alias of a sub-library's
   module (lib/README.md): an alias compiles to nothing, so
   [Httpz.Request.parse] is [Httpz_http.Request.parse] itself. *)

(* Bytes and HTTP's vocabulary: lib/core, httpz.core. *)
module Bigstring = Httpz_core.Bigstring
module Charset = Httpz_core.Charset
module Date = Httpz_core.Date
module Header_name = Httpz_core.Header_name
module Meth = Httpz_core.Meth
module Simd = Httpz_core.Simd
module Span = Httpz_core.Span
module Status = Httpz_core.Status
module Swar = Httpz_core.Swar
module Version = Httpz_core.Version

(* HTTP whatever the version (heads, field semantics): lib/http, httpz.http. *)
module Authority = Httpz_http.Authority
module Cookie = Httpz_http.Cookie
module Etag = Httpz_http.Etag
module Form = Httpz_http.Form
module Media_type = Httpz_http.Media_type
module Multipart = Httpz_http.Multipart
module Parse_error = Httpz_http.Parse_error
module Range = Httpz_http.Range
module Request = Httpz_http.Request
module Response = Httpz_http.Response
module Route_pattern = Httpz_http.Route_pattern
module Router = Httpz_http.Router
module Target = Httpz_http.Target

(* HTTP/1.1 framing: lib/h1, httpz.h1. *)
module Chunked = Httpz_h1.Chunked
module Fixed_body = Httpz_h1.Fixed_body
module Request_writer = Httpz_h1.Request_writer
module Response_head = Httpz_h1.Response_head

(* HTTP/2 and HPACK: lib/h2, httpz.h2. *)
module H2_client = Httpz_h2.H2_client
module H2_config = Httpz_h2.H2_config
module H2_conn_state = Httpz_h2.H2_conn_state
module H2_connection = Httpz_h2.H2_connection
module H2_error = Httpz_h2.H2_error
module H2_frame = Httpz_h2.H2_frame
module H2_head = Httpz_h2.H2_head
module H2_output = Httpz_h2.H2_output
module H2_priority = Httpz_h2.H2_priority
module H2_receive = Httpz_h2.H2_receive
module H2_settings = Httpz_h2.H2_settings
module H2_stream = Httpz_h2.H2_stream
module H2_workspace = Httpz_h2.H2_workspace
module H2_write = Httpz_h2.H2_write
module Hpack = Httpz_h2.Hpack
module Hpack_decoder = Httpz_h2.Hpack_decoder
module Hpack_encoder = Httpz_h2.Hpack_encoder
module Hpack_mirror = Httpz_h2.Hpack_mirror
module Hpack_static = Httpz_h2.Hpack_static
module Hpack_table = Httpz_h2.Hpack_table
module Huffman = Httpz_h2.Huffman
module Prepared_fields = Httpz_h2.Prepared_fields

(* WebSocket: lib/ws, httpz.ws. *)
module Sha1 = Httpz_ws.Sha1
module Utf8 = Httpz_ws.Utf8
module Websocket = Httpz_ws.Websocket
module Ws_close = Httpz_ws.Ws_close
module Ws_extension = Httpz_ws.Ws_extension
module Ws_frame = Httpz_ws.Ws_frame
module Ws_handshake = Httpz_ws.Ws_handshake
module Ws_reader = Httpz_ws.Ws_reader
