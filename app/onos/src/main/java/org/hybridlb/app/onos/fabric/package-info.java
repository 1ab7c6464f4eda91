/** Adapters from ONOS services to the core's southbound ports. */
package org.hybridlb.app.onos.fabric;
