package lowprio

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// A frame is a header of the request id (8 bytes), its kind (1) and the
// payload's length (4), big-endian, then the payload.
const (
	kindRequest byte = iota // parent → child
	kindOK                  // child → parent: the response
	kindError               // child → parent: the error's text
	kindHello               // child → parent, first: the worker's name

	headerLen = 13
	maxFrame  = 64 << 20 // bounds what a corrupt header can make a reader allocate
)

// writeFrame writes one frame in a single write, so frames written under one
// lock never interleave.
func writeFrame(w io.Writer, id uint64, kind byte, payload []byte) error {
	if len(payload) > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds %d", len(payload), maxFrame)
	}
	b := make([]byte, headerLen, headerLen+len(payload))
	binary.BigEndian.PutUint64(b, id)
	b[8] = kind
	binary.BigEndian.PutUint32(b[9:], uint32(len(payload)))
	_, err := w.Write(append(b, payload...))
	return err
}

// readFrame reads one frame; io.EOF means the stream ended between frames.
func readFrame(r *bufio.Reader) (id uint64, kind byte, payload []byte, err error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[9:])
	if n > maxFrame {
		return 0, 0, nil, fmt.Errorf("frame of %d bytes exceeds %d", n, maxFrame)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, 0, nil, io.ErrUnexpectedEOF
	}
	return binary.BigEndian.Uint64(h[:8]), h[8], payload, nil
}
