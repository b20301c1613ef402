// Package exepages hands the pages of the running executable back to the
// system once the service has started.
//
// Linux maps an executable from the page cache's large folios (up to 2 MiB
// on 6.x kernels, and fault-around maps a whole folio), so a start-up that
// runs code from every part of a 34 MiB binary (migrations, seeding, every
// package's initialisation) leaves nearly all of it resident: 33 of an idle
// service's 46 MiB. Release drops those pages and has the kernel read back
// a page at a time only what is touched after it: what serving requests
// runs. That is memory the machine gets back, not an accounting change:
// the dropped pages leave the page cache too.
package exepages
