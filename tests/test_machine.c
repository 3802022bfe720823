/*
 * test_machine.c - the machine probe (lib/machine.h) and the JSON it stores
 * with each run (lib/json.h).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/machine.h"
#include "lib/util.h"

Test(machine, probe_fills_every_provenance_field)
{
	struct machine_info m;

	machine_probe(&m);
	cr_expect_not_null(m.hostname);
	cr_expect_not_null(m.kernel_release);
	cr_expect_not_null(m.cpu_model);
	cr_expect_not_null(m.governor);
	cr_expect_not_null(m.smt);
	cr_expect_not_null(m.aslr);
	cr_expect_gt(m.cores, 0);
	cr_expect_str_eq(m.perturb_version, PERTURB_VERSION);
	/* every Linux has a release and /proc/loadavg */
	cr_expect(machine_has(m.kernel_release));
	cr_expect(machine_has(m.loadavg));
	cr_expect(m.smt && (!strcmp(m.smt, "on") || !strcmp(m.smt, "off") ||
			    !strcmp(m.smt, "unavailable")));
	machine_release(&m);
	cr_expect_null(m.hostname);
}

Test(machine, has)
{
	cr_expect(!machine_has(NULL));
	cr_expect(!machine_has("unavailable"));
	cr_expect(machine_has("performance"));
	cr_expect(machine_has(""));
}

/* The line stored since the first version of the store: the same keys, in
 * the same order, the same separators. */
Test(machine, json_line_format)
{
	struct machine_info m = {
		.hostname = "h", .kernel_release = "6.1.0", .kernel_version = "#1 SMP",
		.kernel_cmdline = "quiet", .arch = "x86_64", .cpu_model = "Test CPU",
		.cores = 4, .governor = "performance", .smt = "off", .aslr = "2",
		.loadavg = "0.00 0.01 0.05", .perturb_version = "0.1.0",
	};
	char *j = machine_json(&m);

	cr_expect_str_eq(j, "{\"hostname\": \"h\", \"kernel_release\": \"6.1.0\", "
			    "\"kernel_version\": \"#1 SMP\", \"kernel_cmdline\": \"quiet\", "
			    "\"arch\": \"x86_64\", \"cpu_model\": \"Test CPU\", "
			    "\"governor\": \"performance\", \"smt\": \"off\", \"aslr\": \"2\", "
			    "\"loadavg\": \"0.00 0.01 0.05\", \"perturb_version\": \"0.1.0\", "
			    "\"cores\": 4}");
	free(j);
}

/* A study's line names its containment (core/proc.h), before "cores". */
Test(machine, json_line_names_the_containment_of_a_study)
{
	struct machine_info m = {
		.hostname = "h", .cores = 2, .containment = "clone-into-cgroup",
	};
	char *j = machine_json(&m);

	cr_expect(strstr(j, "\"perturb_version\": \"unavailable\", "
			    "\"containment\": \"clone-into-cgroup\", \"cores\": 2}"), "%s", j);
	free(j);
}

/* Quotes, control characters and bytes that are not UTF-8 (a command line
 * in Latin-1) still give JSON that a strict parser reads back. */
Test(machine, json_survives_odd_text)
{
	struct machine_info m = {
		.hostname = "a\"b\\c", .kernel_cmdline = "root=/dev/sda1 caf\xe9\n",
		.cpu_model = "\xc3\xa9t\xc3\xa9", .cores = 1,
	};
	char *j = machine_json(&m);
	json_error_t err;
	json_t *v = json_loads(j, 0, &err);

	cr_assert_not_null(v, "not JSON: %s (%s)", err.text, j);
	cr_expect_str_eq(json_string_value(json_object_get(v, "hostname")), "a\"b\\c");
	cr_expect_str_eq(json_string_value(json_object_get(v, "kernel_cmdline")),
			 "root=/dev/sda1 caf\xef\xbf\xbd\n");
	cr_expect_str_eq(json_string_value(json_object_get(v, "cpu_model")), "\xc3\xa9t\xc3\xa9");
	cr_expect_str_eq(json_string_value(json_object_get(v, "arch")), "unavailable");
	cr_expect_eq(json_integer_value(json_object_get(v, "cores")), 1);
	json_decref(v);
	free(j);
}

Test(machine, json_text_null_and_utf8)
{
	json_t *v = json_text(NULL);
	cr_expect(json_is_null(v));
	json_decref(v);
	v = json_text("\xff\xfe ok");
	cr_expect_str_eq(json_string_value(v), "\xef\xbf\xbd\xef\xbf\xbd ok");
	json_decref(v);
}

/* The load rule of perturb run's warnings, on load averages whose answer
 * is known: 2 CPUs, one used by the study, leave one spare (+ 0.5). */
Test(machine, overloaded_compares_the_load_with_the_cpus_left_free)
{
	cr_assert_not(machine_overloaded(0.2, 2, 1, 0));
	cr_assert_not(machine_overloaded(1.5, 2, 1, 0));
	cr_assert(machine_overloaded(1.6, 2, 1, 0));
	/* after the runs our own load counts: 2.4 - 1 = 1.4 is not too much */
	cr_assert_not(machine_overloaded(2.4, 2, 1, 1));
	cr_assert(machine_overloaded(2.6, 2, 1, 1));
	/* every CPU pinned: anyone else's half CPU is too much */
	cr_assert(machine_overloaded(0.6, 4, 4, 0));
	cr_assert_not(machine_overloaded(0.4, 4, 4, 0));
	/* one CPU, unknown values */
	cr_assert(machine_overloaded(0.7, 1, 1, 0));
	cr_assert_not(machine_overloaded(NAN, 2, 1, 0));
	cr_assert_not(machine_overloaded(5, 0, 1, 0));
}

Test(machine, load_sample_reads_proc_loadavg)
{
	struct machine_load l;

	machine_load_sample(&l);
	cr_assert(l.load1 >= 0, "load %g", l.load1);
	cr_assert_geq(l.running, 0);
	cr_assert_gt(l.cores, 0);
	if (l.has_freq)
		cr_assert(l.freq_min_mhz > 0 && l.freq_min_mhz <= l.freq_max_mhz);
}
