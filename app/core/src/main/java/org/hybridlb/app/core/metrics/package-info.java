/**
 * The controller's Prometheus metrics: one registry per controller host (hybridlbd, or the ONOS
 * app for the lifetime of its component), the events observed where they happen, the state read
 * from the controller's thread at scrape time, and the southbound calls timed at the ports.
 */
package org.hybridlb.app.core.metrics;
