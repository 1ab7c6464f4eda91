/** Karaf CLI commands of hybridlb (hybridlb-vips, -assignment, -reassign, -smuxes, -migrations, -stats). */
package org.hybridlb.app.onos.cli;
