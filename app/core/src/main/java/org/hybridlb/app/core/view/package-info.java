/**
 * What the northbound answers: immutable views of the controller (assignment, migrations, SMuxes,
 * switches, statistics, the result of "reassign now"). The REST resources encode them, the Karaf
 * commands print them and the daemon's CLI decodes the REST bodies back into them, so the three
 * agree field by field. Their JSON is the REST contract (app/core/README.md, "REST API").
 */
package org.hybridlb.app.core.view;
