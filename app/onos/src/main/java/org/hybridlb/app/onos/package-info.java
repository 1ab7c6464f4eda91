/** hybridlb inside ONOS: the component, its network configuration and its service. */
package org.hybridlb.app.onos;
