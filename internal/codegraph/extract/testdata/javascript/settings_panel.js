// A Vue options-API component: export default { … } qualifies its members
// with "default".
import { mapState, mapActions } from 'vuex';
import debounce from 'lodash/debounce';
import SettingsRow from './SettingsRow.vue';

export default {
  name: 'SettingsPanel',
  components: { SettingsRow },
  props: {
    initial: { type: Object, default: () => ({}) },
  },
  data() {
    return { draft: { ...this.initial }, saving: false };
  },
  computed: {
    ...mapState(['settings']),
    dirty() {
      return JSON.stringify(this.draft) !== JSON.stringify(this.settings);
    },
  },
  watch: {
    draft: {
      deep: true,
      handler: debounce(function () {
        this.validate();
      }, 300),
    },
  },
  methods: {
    ...mapActions(['saveSettings']),
    async save() {
      this.saving = true;
      await this.saveSettings(this.draft);
      this.saving = false;
    },
    validate() {
      return Object.keys(this.draft).every((k) => this.$refs[k].validate());
    },
    reset: function () {
      this.draft = { ...this.settings };
    },
  },
  mounted() {
    this.$nextTick(() => this.validate());
  },
};
