package lowprio

import "time"

// SelfExe is the executable a child runs.
const SelfExe = selfExe

// NewWorker is a worker like Register's that runs exe and retires its child
// after idle. It is not registered: a child can serve it only when name is.
func NewWorker(name string, fn Func, exe string, idle time.Duration) *Worker {
	w := newWorker(name, fn)
	w.exe, w.idle = exe, idle
	return w
}

// Pending is the number of calls waiting for the running child.
func (w *Worker) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.child == nil {
		return 0
	}
	return len(w.child.pending)
}
