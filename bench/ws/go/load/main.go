// Load generator of the WebSocket benchmark (bench/ws/bench_ws.py).
//
// Echo mode: -c connections each send a binary message of -size bytes, wait
// for its echo, check its length, and go again, for -d after a -warmup; it
// prints one JSON object: round trips in the measured interval, errors.
//
// Idle mode (-idle N): opens N connections, prints "ready N" once all are
// open, holds them until stdin closes, then closes them.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

func main() {
	url := flag.String("url", "ws://127.0.0.1:9001/", "server URL")
	conns := flag.Int("c", 64, "connections")
	size := flag.Int("size", 32, "message bytes")
	dur := flag.Duration("d", 3*time.Second, "measured duration")
	warm := flag.Duration("warmup", 500*time.Millisecond, "warm-up before measuring")
	idle := flag.Int("idle", 0, "idle mode: hold this many connections")
	flag.Parse()
	if *idle > 0 {
		holdIdle(*url, *idle)
		return
	}
	var counting int32
	var trips, errors int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	msg := make([]byte, *size)
	for i := range msg {
		msg[i] = byte('a' + i%26)
	}
	for i := 0; i < *conns; i++ {
		c, _, err := websocket.DefaultDialer.Dial(*url, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			os.Exit(1)
		}
		wg.Add(1)
		go func(c *websocket.Conn) {
			defer wg.Done()
			defer c.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
					atomic.AddInt64(&errors, 1)
					return
				}
				kind, got, err := c.ReadMessage()
				if err != nil || kind != websocket.BinaryMessage || len(got) != len(msg) {
					atomic.AddInt64(&errors, 1)
					return
				}
				if atomic.LoadInt32(&counting) == 1 {
					atomic.AddInt64(&trips, 1)
				}
			}
		}(c)
	}
	time.Sleep(*warm)
	atomic.StoreInt32(&counting, 1)
	start := time.Now()
	time.Sleep(*dur)
	atomic.StoreInt32(&counting, 0)
	elapsed := time.Since(start).Seconds()
	n := atomic.LoadInt64(&trips)
	close(stop)
	wg.Wait()
	out, _ := json.Marshal(map[string]interface{}{
		"round_trips": n, "seconds": elapsed, "errors": atomic.LoadInt64(&errors),
		"connections": *conns, "size": *size,
	})
	fmt.Println(string(out))
}

func holdIdle(url string, n int) {
	held := make([]*websocket.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			os.Exit(1)
		}
		held = append(held, c)
	}
	fmt.Printf("ready %d\n", len(held))
	io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	for _, c := range held {
		c.Close()
	}
}
