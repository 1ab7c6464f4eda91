/** REST registration of the core's resources under /onos/hybridlb/. */
package org.hybridlb.app.onos.rest;
