// The gorilla/websocket peer of the WebSocket benchmark: echoes every
// message back with its own type (text or binary), as examples/ws_echo does.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{
	ReadBufferSize:  16384,
	WriteBufferSize: 16384,
	CheckOrigin:     func(*http.Request) bool { return true },
}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	for {
		kind, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, msg); err != nil {
			return
		}
	}
}

func main() {
	port := flag.String("p", "9001", "port on 127.0.0.1")
	flag.Parse()
	http.HandleFunc("/", echo)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+*port, nil))
}
