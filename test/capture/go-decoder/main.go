// A stdio MCP dispatcher with mcp-go's shapes (server.HandleMessage): the envelope and the call's
// params decoded by encoding/json into tagged structs. It logs what it would run.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type callToolRequest struct {
	Params struct {
		Name      string                 `json:"name"`
		Arguments map[string]interface{} `json:"arguments,omitempty"`
	} `json:"params"`
}

type typedCallRequest struct {
	Params struct {
		Arguments struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		} `json:"arguments"`
	} `json:"params"`
}

func main() {
	log, _ := os.OpenFile(os.Getenv("LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var base struct {
			JSONRPC string      `json:"jsonrpc"`
			Method  string      `json:"method"`
			ID      interface{} `json:"id,omitempty"`
		}
		if err := json.Unmarshal(in.Bytes(), &base); err != nil || base.ID == nil {
			continue
		}
		if base.Method == "tools/call" {
			var r callToolRequest
			json.Unmarshal(in.Bytes(), &r)
			if r.Params.Name == "write_typed" {
				// A tool whose input is bound to a struct, as typed tool handlers do.
				var typed typedCallRequest
				json.Unmarshal(in.Bytes(), &typed)
				fmt.Fprintf(log, "RAN write_typed path=%s\n", typed.Params.Arguments.Path)
			} else {
				a, _ := json.Marshal(r.Params.Arguments)
				fmt.Fprintf(log, "RAN %s %s\n", r.Params.Name, a)
			}
		} else {
			fmt.Fprintf(log, "%s\n", base.Method)
		}
		id, _ := json.Marshal(base.ID)
		fmt.Printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n", id)
	}
}
