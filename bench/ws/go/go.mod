module httpz.bench/ws

go 1.21

require github.com/gorilla/websocket v1.5.3
